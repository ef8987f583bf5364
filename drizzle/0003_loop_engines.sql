CREATE TABLE `loop_engines` (
	`owner` text PRIMARY KEY NOT NULL,
	`host` text NOT NULL,
	`pid` integer NOT NULL,
	`startedAt` integer NOT NULL,
	`seenAt` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `runs_status_org_loop` ON `runs` (`status`,`orgId`,`loopId`,`wakeAt`);