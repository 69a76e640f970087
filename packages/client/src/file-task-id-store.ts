import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { TaskIdEntry, TaskIdStore } from './types.js';

const FORMAT_VERSION = 1;

/**
 * Keeps task ids in one JSON file so a restarted client can find its tasks again
 * (`resumeAll`). Every change writes a temporary file beside it, flushes it, and renames it
 * over the old one, so a crash leaves either the old or the new list, never half of one.
 * A missing file is an empty list; a file that is not ours fails loudly instead of being
 * overwritten. Changes from one process are serialized; two processes sharing one file
 * may lose each other's changes (last writer wins), so give each client its own file.
 */
export class FileTaskIdStore implements TaskIdStore {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {}

  save(entry: TaskIdEntry): Promise<void> {
    return this.change((entries) => [...entries.filter((e) => e.taskId !== entry.taskId), { taskId: entry.taskId, tool: entry.tool, createdAt: entry.createdAt }]);
  }

  remove(taskId: string): Promise<void> {
    return this.change((entries) => (entries.some((e) => e.taskId === taskId) ? entries.filter((e) => e.taskId !== taskId) : undefined));
  }

  list(): Promise<TaskIdEntry[]> {
    return this.serialized(() => this.read());
  }

  /** Applies `edit` to the current list; `undefined` means nothing changed and nothing is written. */
  private change(edit: (entries: TaskIdEntry[]) => TaskIdEntry[] | undefined): Promise<void> {
    return this.serialized(async () => {
      const next = edit(await this.read());
      if (next) await this.write(next);
    });
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async read(): Promise<TaskIdEntry[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return parseStoreFile(text, this.path);
  }

  private async write(entries: TaskIdEntry[]): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const temp = `${this.path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const body = `${JSON.stringify({ version: FORMAT_VERSION, tasks: entries }, null, 2)}\n`;
    try {
      const file = await open(temp, 'w', 0o600);
      try {
        await file.writeFile(body, 'utf8');
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, this.path);
    } catch (err) {
      await rm(temp, { force: true }).catch(() => undefined);
      throw err;
    }
  }
}

export class CorruptTaskIdStoreError extends Error {
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`FileTaskIdStore: ${path} is corrupt (${problem}). Fix or delete the file; it is left untouched.`);
    this.name = 'CorruptTaskIdStoreError';
  }
}

/** The file's content: `{"version": 1, "tasks": [{taskId, tool, createdAt}, ...]}`. */
export function parseStoreFile(text: string, path: string): TaskIdEntry[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new CorruptTaskIdStoreError(path, `not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new CorruptTaskIdStoreError(path, 'not a JSON object');
  const { version, tasks } = data as Record<string, unknown>;
  if (version !== FORMAT_VERSION) throw new CorruptTaskIdStoreError(path, `unknown version ${JSON.stringify(version)}`);
  if (!Array.isArray(tasks)) throw new CorruptTaskIdStoreError(path, '"tasks" is not an array');
  return tasks.map((task, index) => {
    const entry = task as Partial<Record<keyof TaskIdEntry, unknown>> | null;
    if (typeof entry !== 'object' || entry === null || typeof entry.taskId !== 'string' || typeof entry.tool !== 'string' || typeof entry.createdAt !== 'string') {
      throw new CorruptTaskIdStoreError(path, `tasks[${index}] must be {taskId, tool, createdAt} strings`);
    }
    return { taskId: entry.taskId, tool: entry.tool, createdAt: entry.createdAt };
  });
}
