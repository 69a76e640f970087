import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { END_OF_GENERATED, mappingDocument } from './markdown.js';

describe('docs/mapping.md', () => {
  it('is exactly what the mapping tables generate down to the end marker (run npm run docs:mapping after changing them)', () => {
    const onDisk = readFileSync(new URL('../../docs/mapping.md', import.meta.url), 'utf8');
    expect(onDisk).toContain(END_OF_GENERATED);
    expect(onDisk).toBe(mappingDocument(onDisk));
  });

  it('keeps the hand-written part when it regenerates the tables', () => {
    const stale = `# old tables\n${END_OF_GENERATED}\n\n## Prose\n\nKept.\n`;
    const fresh = mappingDocument(stale);
    expect(fresh).not.toContain('# old tables');
    expect(fresh.endsWith(`${END_OF_GENERATED}\n\n## Prose\n\nKept.\n`)).toBe(true);
  });
});
