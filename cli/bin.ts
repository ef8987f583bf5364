#!/usr/bin/env bun
/** Entry point of the `health` bin (package.json). Exit code per CONTRACT: 0, 1, 2 usage, 3 blocked. */
import main from "./index.ts";
import { runCli } from "./run.ts";

process.exitCode = await runCli(main, process.argv.slice(2));
