/** Errors of a soak, counted by kind so that a report says what failed, not just how often. */
export class ErrorTally {
  private readonly kinds = new Map<string, number>();
  count = 0;

  add(kind: string): void {
    this.count++;
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
  }

  get byKind(): Array<{ kind: string; count: number }> {
    return [...this.kinds].map(([kind, count]) => ({ kind, count })).sort((a, b) => b.count - a.count);
  }
}
