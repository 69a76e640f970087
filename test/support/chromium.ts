import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's chromium (installed by .ci/run); never a downloaded browser. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface Chromium {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/** A headless chromium with a fresh profile. */
export async function launchChromium(): Promise<Chromium> {
  const profile = mkdtempSync(join(tmpdir(), 'mts-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'], headless: true });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
