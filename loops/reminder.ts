/**
 * Example loop: schedules an administrative reminder, waits with a durable `step.sleep` (the run
 * is released while it waits, and survives a restart), then delivers it. Non-clinical: reminders
 * are about paperwork, callbacks and follow-ups for staff.
 *
 * Trigger it with a body like { "subject": "Call back about the records request", "after": "5 seconds" }
 */
import { type Duration, type HealthEvent, type HealthStep, Workflow } from "health/loop";

export interface ReminderBody {
  subject?: string;
  /** How long to wait: milliseconds or a string such as "30 seconds". Default 2 seconds. */
  after?: Duration;
  queue?: string;
}

export class ReminderLoop extends Workflow<ReminderBody | undefined> {
  async run(event: HealthEvent<ReminderBody | undefined>, step: HealthStep): Promise<unknown> {
    const body = event.body ?? {};
    const reminder = await step.do("schedule reminder", () => ({
      reminderId: `rem_${crypto.randomUUID()}`,
      subject: (body.subject ?? "Follow up").slice(0, 200),
      queue: body.queue ?? "front-desk",
      scheduledAt: new Date().toISOString(),
    }));
    await step.sleep("wait until due", body.after ?? "2 seconds");
    const delivery = await step.do("deliver reminder", () => ({
      reminderId: reminder.reminderId,
      queue: reminder.queue,
      deliveredAt: new Date().toISOString(),
    }));
    return { reminder, delivery };
  }
}
