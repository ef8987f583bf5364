/** The trigger bench's loop: one trivial step, so runs are cheap to execute in the background. */
import { type HealthEvent, type HealthStep, Workflow } from "health/loop";

export class NoopLoop extends Workflow {
  async run(event: HealthEvent, step: HealthStep): Promise<unknown> {
    return step.do("echo", () => event.body ?? null);
  }
}
