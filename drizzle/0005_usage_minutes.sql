CREATE TABLE `usage_minutes` (
	`minute` integer NOT NULL,
	`orgId` text NOT NULL,
	`company` text NOT NULL,
	`tokenId` text NOT NULL,
	`loopId` text NOT NULL,
	`requests` integer DEFAULT 0 NOT NULL,
	`cacheHits` integer DEFAULT 0 NOT NULL,
	`cacheMisses` integer DEFAULT 0 NOT NULL,
	`clinicalBlocks` integer DEFAULT 0 NOT NULL,
	`rateLimited` integer DEFAULT 0 NOT NULL,
	`upstreamErrors` integer DEFAULT 0 NOT NULL,
	`upstreamTimeouts` integer DEFAULT 0 NOT NULL,
	`runsStarted` integer DEFAULT 0 NOT NULL,
	`runsCompleted` integer DEFAULT 0 NOT NULL,
	`runsErrored` integer DEFAULT 0 NOT NULL,
	`gatewayMs` text,
	`upstreamMs` text,
	`runMs` text,
	PRIMARY KEY(`orgId`, `minute`, `company`, `tokenId`, `loopId`)
);
--> statement-breakpoint
CREATE INDEX `usage_minutes_minute` ON `usage_minutes` (`minute`);