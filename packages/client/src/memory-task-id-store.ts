import type { TaskIdEntry, TaskIdStore } from './types.js';

/** Keeps task ids for the life of the process: the default, and enough when nothing must survive a restart. */
export class MemoryTaskIdStore implements TaskIdStore {
  private readonly entries = new Map<string, TaskIdEntry>();

  async save(entry: TaskIdEntry): Promise<void> {
    this.entries.set(entry.taskId, { ...entry });
  }

  async remove(taskId: string): Promise<void> {
    this.entries.delete(taskId);
  }

  async list(): Promise<TaskIdEntry[]> {
    return [...this.entries.values()].map((entry) => ({ ...entry }));
  }
}
