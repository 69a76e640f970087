import { unwatchFile, watchFile } from 'node:fs';
import { ConfigError, type Loaded } from '../config/load.js';
import { settingsNeedingRestart } from '../config/reload.js';
import type { Shim } from '../shim.js';

/** How often a watched file's status is checked; polling survives editors that replace the file. */
const WATCH_INTERVAL_MS = 500;

export interface ReloadsOptions {
  shim: Pick<Shim, 'reload'>;
  /** Reads the configuration again, exactly as at start (same flags, same environment). */
  load: () => Loaded;
  started: Loaded;
  write: (line: string) => void;
}

/**
 * SIGHUP, and with `watchConfig` a change to one of the configuration's files, reloads the
 * configuration (docs/operations.md, "Reloading"): validated first, a bad file keeps the running
 * configuration and says why; otherwise the live settings are applied and the changes listed, and
 * settings that need a restart are named. Reloads run one at a time; one asked for meanwhile runs after.
 */
export function handleReloads({ shim, load, started, write }: ReloadsOptions): { request(why: string): void; stop(): void } {
  let stopped = false;
  let running: Promise<void> | undefined;
  let again: string | undefined;
  let watched: string[] = [];

  const reload = async (why: string): Promise<void> => {
    let loaded: Loaded;
    try {
      loaded = load();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      write(`mcp-tasks-shim: ${why}: reload refused, the running configuration stays: ${err.message}`);
      return;
    }
    let changes: string[];
    try {
      changes = await shim.reload(loaded.config);
    } catch (err) {
      write(`mcp-tasks-shim: ${why}: reload refused, the running configuration stays: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    write(
      changes.length === 0
        ? `mcp-tasks-shim: ${why}: configuration reloaded, nothing changed`
        : `mcp-tasks-shim: ${why}: configuration reloaded:\n${changes.map((c) => `  - ${c}`).join('\n')}`,
    );
    const fixed = settingsNeedingRestart(started.config, loaded.config);
    if (fixed.length > 0) write(`mcp-tasks-shim: ${why}: not reloaded (restart to apply): ${fixed.join(', ')}`);
    if (started.config.watchConfig) watch(loaded.files);
  };

  const request = (why: string): void => {
    if (stopped) {
      write(`mcp-tasks-shim: ${why}: shutting down, not reloaded`);
      return;
    }
    if (running) {
      again = why;
      return;
    }
    running = reload(why)
      .catch((err: unknown) => write(`mcp-tasks-shim: ${why}: reload failed: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => {
        running = undefined;
        const next = again;
        again = undefined;
        if (next) request(next);
      });
  };

  const onChange = (path: string) => (current: { mtimeMs: number; size: number }, previous: { mtimeMs: number; size: number }) => {
    if (current.mtimeMs !== previous.mtimeMs || current.size !== previous.size) request(`${path} changed`);
  };
  const listeners = new Map<string, ReturnType<typeof onChange>>();
  function watch(files: string[]): void {
    for (const path of watched.filter((p) => !files.includes(p))) {
      unwatchFile(path, listeners.get(path));
      listeners.delete(path);
    }
    for (const path of files.filter((p) => !listeners.has(p))) {
      const listener = onChange(path);
      listeners.set(path, listener);
      watchFile(path, { interval: WATCH_INTERVAL_MS, persistent: false }, listener);
    }
    watched = files;
  }

  const onHup = (): void => request('SIGHUP');
  process.on('SIGHUP', onHup);
  if (started.config.watchConfig) watch(started.files);
  return {
    request,
    /** From the shutdown on: files are no longer watched, and SIGHUP (still caught, so that it ends nothing) only says so. */
    stop() {
      stopped = true;
      watch([]);
    },
  };
}
