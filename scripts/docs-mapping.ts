import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mappingDocument } from '../src/mapping/markdown.js';

const file = new URL('../docs/mapping.md', import.meta.url);
writeFileSync(file, mappingDocument(existsSync(file) ? readFileSync(file, 'utf8') : ''));
