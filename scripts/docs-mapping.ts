import { writeFileSync } from 'node:fs';
import { mappingMarkdown } from '../src/mapping/markdown.js';

writeFileSync(new URL('../docs/mapping.md', import.meta.url), mappingMarkdown());
