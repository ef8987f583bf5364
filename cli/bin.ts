#!/usr/bin/env bun
/** Entry point of the `health` bin (package.json). Exit codes (docs/interface.md §12.2): 0, 1, 2 usage, 3 blocked. */
import main from "./index.ts";
import { runCli } from "./run.ts";

process.exitCode = await runCli(main, process.argv.slice(2));
