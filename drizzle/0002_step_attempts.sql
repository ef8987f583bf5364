CREATE TABLE `run_step_attempts` (
	`runId` text NOT NULL,
	`key` text NOT NULL,
	`attempt` integer NOT NULL,
	`status` text NOT NULL,
	`error` text,
	`startedAt` integer NOT NULL,
	`finishedAt` integer,
	PRIMARY KEY(`runId`, `key`, `attempt`),
	FOREIGN KEY (`runId`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action
);
