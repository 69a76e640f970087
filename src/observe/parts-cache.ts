type Level<V> = Map<string, Map<string, Map<string, V>>>;

/**
 * Values by four string parts (`''` for one a caller does not need), looked up without joining the parts into one key (a new
 * string that every request would allocate and hash). Cleared once it holds `max` values, so
 * that parts a client chooses cannot grow it without bound.
 */
export class PartsCache<V> {
  private root = new Map<string, Level<V>>();
  private size = 0;

  constructor(private readonly max: number) {}

  get(a: string, b: string, c: string, d: string): V | undefined {
    return this.root.get(a)?.get(b)?.get(c)?.get(d);
  }

  set(a: string, b: string, c: string, d: string, value: V): V {
    if (this.size >= this.max && this.get(a, b, c, d) === undefined) {
      this.root = new Map();
      this.size = 0;
    }
    let level1 = this.root.get(a);
    if (!level1) this.root.set(a, (level1 = new Map()));
    let level2 = level1.get(b);
    if (!level2) level1.set(b, (level2 = new Map()));
    let level3 = level2.get(c);
    if (!level3) level2.set(c, (level3 = new Map()));
    if (!level3.has(d)) this.size++;
    level3.set(d, value);
    return value;
  }
}
