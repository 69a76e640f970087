import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mappingMarkdown } from './markdown.js';

describe('docs/mapping.md', () => {
  it('is exactly what the mapping tables generate (run npm run docs:mapping after changing them)', () => {
    const onDisk = readFileSync(new URL('../../docs/mapping.md', import.meta.url), 'utf8');
    expect(onDisk).toBe(mappingMarkdown());
  });
});
