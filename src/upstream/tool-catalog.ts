import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { declaresToolTasks } from '../core/policy.js';
import type { ToolCatalog, ToolInfo } from '../core/ports.js';

/**
 * The upstream's tools and whether it declares tasks, cached for `ttlMs` so that policy lookups on
 * the hot path cost nothing; a name we have not seen triggers one refresh (a tool added upstream
 * shows up at once).
 */
export class CachedToolCatalog implements ToolCatalog {
  private tools = new Map<string, ToolInfo>();
  /** Each listed tool as a settled promise, so that a lookup on the hot path allocates nothing. */
  private answers = new Map<string, Promise<ToolInfo>>();
  private tasksDeclared = false;
  private fetchedAt = -Infinity;
  private refreshing: Promise<Tool[]> | undefined;

  constructor(
    private readonly list: () => Promise<Tool[]>,
    private readonly capabilities: () => Promise<Record<string, unknown>>,
    private readonly ttlMs = 30_000,
  ) {}

  get(name: string): Promise<ToolInfo | undefined> {
    const age = Date.now() - this.fetchedAt;
    if (age <= this.ttlMs) {
      const answer = this.answers.get(name);
      if (answer) return answer;
    }
    return this.lookUp(name, age);
  }

  private async lookUp(name: string, age: number): Promise<ToolInfo | undefined> {
    // A miss refreshes at most once a second, so a flood of made-up names cannot flood the upstream.
    if (age > this.ttlMs || (!this.tools.has(name) && age > 1_000)) {
      await this.refresh().catch(() => undefined);
    }
    return this.tools.get(name);
  }

  /** Every tool, from the cache while it is fresh (a dashboard's polls cost the upstream nothing). */
  async all(): Promise<ToolInfo[]> {
    if (Date.now() - this.fetchedAt > this.ttlMs) await this.refresh();
    return [...this.tools.values()];
  }

  declaresTasks(): boolean {
    return this.tasksDeclared;
  }

  /** Fresh list from the upstream; concurrent callers share one request. */
  refresh(): Promise<Tool[]> {
    this.refreshing ??= Promise.all([this.list(), this.capabilities()])
      .then(([tools, capabilities]) => {
        this.tools = new Map(tools.map((t) => [t.name, t as ToolInfo]));
        this.answers = new Map(tools.map((t) => [t.name, Promise.resolve(t as ToolInfo)]));
        this.tasksDeclared = declaresToolTasks(capabilities);
        this.fetchedAt = Date.now();
        return tools;
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }
}
