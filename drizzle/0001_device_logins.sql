CREATE TABLE `device_logins` (
	`id` text PRIMARY KEY NOT NULL,
	`deviceCodeHash` text NOT NULL,
	`userCode` text NOT NULL,
	`status` text NOT NULL,
	`clientName` text NOT NULL,
	`userId` text,
	`orgId` text,
	`createdAt` integer NOT NULL,
	`expiresAt` integer NOT NULL,
	`approvedAt` integer,
	`lastPolledAt` integer,
	FOREIGN KEY (`userId`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`orgId`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `device_logins_device_code_hash` ON `device_logins` (`deviceCodeHash`);--> statement-breakpoint
CREATE UNIQUE INDEX `device_logins_user_code` ON `device_logins` (`userCode`);--> statement-breakpoint
CREATE INDEX `device_logins_expires` ON `device_logins` (`expiresAt`);