CREATE TABLE `admin_audit` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`orgId` text NOT NULL,
	`actorKind` text NOT NULL,
	`actorId` text NOT NULL,
	`action` text NOT NULL,
	`targetId` text,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `admin_audit_org_at` ON `admin_audit` (`orgId`,`at`);--> statement-breakpoint
CREATE TABLE `api_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`orgId` text NOT NULL,
	`name` text NOT NULL,
	`prefix` text NOT NULL,
	`lastFour` text NOT NULL,
	`hash` text NOT NULL,
	`scopes` text NOT NULL,
	`createdBy` text NOT NULL,
	`createdAt` integer NOT NULL,
	`lastUsedAt` integer,
	`revokedAt` integer,
	`revokedBy` text,
	FOREIGN KEY (`orgId`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_hash` ON `api_tokens` (`hash`);--> statement-breakpoint
CREATE INDEX `api_tokens_org` ON `api_tokens` (`orgId`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`scope` text NOT NULL,
	`key` text NOT NULL,
	`requestHash` text NOT NULL,
	`status` text NOT NULL,
	`responseStatus` integer,
	`responseBody` text,
	`responseHeaders` text,
	`createdAt` integer NOT NULL,
	`expiresAt` integer NOT NULL,
	PRIMARY KEY(`scope`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_expires` ON `idempotency_keys` (`expiresAt`);--> statement-breakpoint
CREATE TABLE `memberships` (
	`userId` text NOT NULL,
	`orgId` text NOT NULL,
	`role` text NOT NULL,
	`createdAt` integer NOT NULL,
	PRIMARY KEY(`userId`, `orgId`),
	FOREIGN KEY (`userId`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`orgId`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `organizations` (
	`id` text PRIMARY KEY NOT NULL,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`createdAt` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `organizations_slug_unique` ON `organizations` (`slug`);--> statement-breakpoint
CREATE TABLE `plan_audit` (
	`auditId` text PRIMARY KEY NOT NULL,
	`requestId` text NOT NULL,
	`company` text NOT NULL,
	`principalKind` text NOT NULL,
	`principalId` text NOT NULL,
	`intent` text NOT NULL,
	`cache` text NOT NULL,
	`upstreamLatencyMs` integer,
	`blockedSteps` integer NOT NULL,
	`status` integer NOT NULL,
	`createdAt` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `plan_audit_company_at` ON `plan_audit` (`company`,`createdAt`);--> statement-breakpoint
CREATE TABLE `rate_limit_days` (
	`company` text NOT NULL,
	`day` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`company`, `day`)
);
--> statement-breakpoint
CREATE TABLE `run_steps` (
	`runId` text NOT NULL,
	`key` text NOT NULL,
	`name` text NOT NULL,
	`idx` integer NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`result` text,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`wakeAt` integer,
	`startedAt` integer NOT NULL,
	`finishedAt` integer,
	PRIMARY KEY(`runId`, `key`),
	FOREIGN KEY (`runId`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`workflowInstanceId` text NOT NULL,
	`orgId` text NOT NULL,
	`loopId` text NOT NULL,
	`input` text,
	`triggerKind` text NOT NULL,
	`triggerId` text NOT NULL,
	`triggerName` text NOT NULL,
	`status` text NOT NULL,
	`output` text,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`leaseOwner` text,
	`leaseExpiresAt` integer,
	`wakeAt` integer,
	`createdAt` integer NOT NULL,
	`updatedAt` integer NOT NULL,
	`startedAt` integer,
	`finishedAt` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `runs_workflowInstanceId_unique` ON `runs` (`workflowInstanceId`);--> statement-breakpoint
CREATE INDEX `runs_org_loop_created` ON `runs` (`orgId`,`loopId`,`createdAt`);--> statement-breakpoint
CREATE INDEX `runs_status_wake` ON `runs` (`status`,`wakeAt`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`hash` text NOT NULL,
	`userId` text NOT NULL,
	`orgId` text NOT NULL,
	`createdAt` integer NOT NULL,
	`expiresAt` integer NOT NULL,
	FOREIGN KEY (`userId`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`orgId`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_hash_unique` ON `sessions` (`hash`);--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updatedAt` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`passwordHash` text NOT NULL,
	`createdAt` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);