/**
 * Debian's Chromium driven by playwright-core (never Playwright's own browser download), with a
 * fresh profile per launch, disposed with `await using`. Tests that need it skip when
 * /usr/bin/chromium is absent: `apt-get install -y chromium` provides it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM_PATH);

/** Screenshots for reviewers; the folder is ignored by git. */
export const ARTIFACTS_DIR = join(import.meta.dir, "..", "artifacts");

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** What the page reported that a test should fail on: CSP and Trusted Types refusals, uncaught errors. */
const SECURITY_MESSAGE = /Content Security Policy|Refused to|Trusted Type|TrustedHTML|TrustedScript/i;

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** CSP violations and uncaught page errors seen so far. */
  problems: string[];
  /** Saves a PNG under test/artifacts/<folder>/ (full page unless `viewportOnly`, for dialogs) and returns its path. */
  screenshot(name: string, options?: { viewportOnly?: boolean }): Promise<string>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface LaunchOptions {
  /** Subfolder of test/artifacts for this suite's screenshots. */
  artifacts: string;
  viewport?: { width: number; height: number };
}

export async function launchBrowser(options: LaunchOptions): Promise<TestBrowser> {
  // launchPersistentContext passes this as --user-data-dir: a fresh profile every run.
  const profile = mkdtempSync(join(tmpdir(), "health-chromium-"));
  const shots = join(ARTIFACTS_DIR, options.artifacts);
  mkdirSync(shots, { recursive: true });
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: options.viewport ?? { width: 1280, height: 800 },
      permissions: ["clipboard-read", "clipboard-write"],
      timeout: 20_000,
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  context.setDefaultTimeout(10_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on("console", function recordSecurityMessage(message) {
    if (SECURITY_MESSAGE.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", function recordPageError(error) {
    problems.push(`page error: ${error.message}`);
  });
  return {
    context,
    page,
    problems,
    async screenshot(name, screenshotOptions) {
      const path = join(shots, `${name}.png`);
      await page.screenshot({ path, fullPage: screenshotOptions?.viewportOnly !== true });
      return path;
    },
    async [Symbol.asyncDispose]() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
