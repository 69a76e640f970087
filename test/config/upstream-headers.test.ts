import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { configProblems as problems, writeIn } from '../support/config-problems.js';

const dir = mkdtempSync(join(tmpdir(), 'mts-upstream-headers-'));

const file = (name: string, content: string): string => writeIn(dir, name, content);

const headers = (argv: string[], env: Record<string, string> = {}): Record<string, string> => loadConfig({ argv, env }).config.upstreamHeaders;

describe('upstream headers configuration', () => {
  it('is empty by default and takes SHIM_UPSTREAM_HEADERS and the file together, names lower-cased', () => {
    expect(headers([])).toEqual({});
    const path = file('headers.json', JSON.stringify({ 'X-Api-Key': 'k-123' }));
    expect(headers(['--upstream-headers-file', path], { SHIM_UPSTREAM_HEADERS: '{"Authorization": "Bearer upstream-secret"}' })).toEqual({
      authorization: 'Bearer upstream-secret',
      'x-api-key': 'k-123',
    });
    expect(headers([], { SHIM_UPSTREAM_HEADERS_FILE: path })).toEqual({ 'x-api-key': 'k-123' });
  });

  it('refuses a header named in both places', () => {
    const path = file('dup.json', JSON.stringify({ authorization: 'Bearer b' }));
    expect(problems(['--upstream-headers-file', path], { SHIM_UPSTREAM_HEADERS: '{"Authorization": "Bearer a"}' })).toEqual([
      `upstream headers file ${path}: header 'authorization' is also set by SHIM_UPSTREAM_HEADERS`,
    ]);
  });

  it('refuses CR or LF in a value, invalid names, reserved names and duplicates, never printing a value', () => {
    const found = problems([], {
      SHIM_UPSTREAM_HEADERS: JSON.stringify({
        'x-injected': 'secret-value\r\nx-evil: 1',
        'bad name': 'v',
        'Mcp-Session-Id': 'v',
        'X-Key': 'a',
        'x-key': 'b',
        'x-unicode': 'caf\u2603',
      }),
    });
    expect(found).toEqual([
      "SHIM_UPSTREAM_HEADERS: the value of header 'x-injected' contains CR, LF or NUL",
      "SHIM_UPSTREAM_HEADERS: 'bad name' is not a valid header name",
      "SHIM_UPSTREAM_HEADERS: header 'Mcp-Session-Id' is set by the shim itself and cannot be configured",
      "SHIM_UPSTREAM_HEADERS: header 'x-key' is given more than once",
      "SHIM_UPSTREAM_HEADERS: the value of header 'x-unicode' contains characters not allowed in a header",
    ]);
    expect(found.join('\n')).not.toContain('secret-value');
  });

  it('refuses text that is not a JSON object of strings, without quoting it', () => {
    const found = problems([], { SHIM_UPSTREAM_HEADERS: '{"authorization": Bearer leaked-secret}' });
    expect(found).toEqual(['SHIM_UPSTREAM_HEADERS: not a JSON object']);
    expect(problems([], { SHIM_UPSTREAM_HEADERS: '["a"]' })[0]).toMatch(/^SHIM_UPSTREAM_HEADERS: /);
    expect(problems([], { SHIM_UPSTREAM_HEADERS: '{"x-count": 3}' })).toEqual(['SHIM_UPSTREAM_HEADERS: x-count: each value must be a string']);
  });

  it('refuses a headers file that cannot be read', () => {
    const missing = join(dir, 'absent.json');
    expect(problems(['--upstream-headers-file', missing])).toEqual([`upstream headers file ${missing}: cannot read (ENOENT)`]);
  });
});
