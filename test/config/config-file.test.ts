import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { describeLiveChanges, keyMaterialDigest, settingsNeedingRestart } from '../../src/config/reload.js';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import { configProblems as problems, writeIn } from '../support/config-problems.js';

const dir = mkdtempSync(join(tmpdir(), 'mts-config-file-'));

describe('the legacy mode setting', () => {
  it('is read from --legacy, SHIM_LEGACY and the config key legacy, flags over the environment', () => {
    expect(loadConfig({ argv: ['--legacy', 'off'], env: {} }).config.legacy).toBe('off');
    expect(loadConfig({ argv: [], env: { SHIM_LEGACY: 'drain' } }).config.legacy).toBe('drain');
    expect(loadConfig({ argv: ['--legacy', 'on'], env: { SHIM_LEGACY: 'off' } }).config.legacy).toBe('on');
    expect(loadConfig({ argv: ['--config', writeIn(dir, 'legacy.json', '{"legacy": "off"}')], env: {} }).config.legacy).toBe('off');
    expect(loadConfig({ argv: [], env: {} }).config.legacy).toBeUndefined();
  });

  it('refuses a mode other than on, drain or off', () => {
    expect(problems(['--legacy', 'sideways'])).toEqual(['--legacy: must be one of on, drain, off']);
  });
});

describe('the config file', () => {
  it('sets configuration keys under the environment and the flags', () => {
    const path = writeIn(dir, 'layers.json', JSON.stringify({ legacyBrownouts: ['2026-06-01T14:00:00Z/2026-06-01T15:00:00Z'], pollIntervalMs: 5_000, maxBodyBytes: 4_096 }));
    const { config, files } = loadConfig({ argv: ['--config', path], env: { SHIM_POLL_INTERVAL_MS: '3000' } });
    expect(config).toMatchObject({ legacyBrownouts: ['2026-06-01T14:00:00Z/2026-06-01T15:00:00Z'], pollIntervalMs: 3_000, maxBodyBytes: 4_096 });
    expect(files).toEqual([path]);
    expect(loadConfig({ argv: [], env: { SHIM_CONFIG_FILE: path } }).config.maxBodyBytes).toBe(4_096);
  });

  it('lists every file the configuration was read from, for --watch-config', () => {
    const config = writeIn(dir, 'all-files.json', '{}');
    const policy = writeIn(dir, 'policy.json', '{"default": "optional"}');
    const tokens = writeIn(dir, 'tokens.json', '{"a-token-of-16-chars-or-more": "team-a"}');
    const loaded = loadConfig({ argv: ['--config', config, '--policy', policy, '--tokens', tokens, '--watch-config'], env: {} });
    expect(loaded.files).toEqual([config, policy, tokens]);
    expect(loaded.config.watchConfig).toBe(true);
  });

  it('refuses unknown keys, credentials and upstream headers, and a file that is not one JSON object', () => {
    const path = writeIn(dir, 'bad-keys.json', JSON.stringify({ legacyMode: 'off', auth: { mode: 'none' }, upstreamHeaders: {} }));
    expect(problems(['--config', path])).toEqual([
      `config file ${path}: unknown key 'legacyMode'`,
      `config file ${path}: 'auth' is set by its own flags and environment variables, not in the config file`,
      `config file ${path}: 'upstreamHeaders' is set by its own flags and environment variables, not in the config file`,
    ]);
    const list = writeIn(dir, 'list.json', '["legacy"]');
    expect(problems(['--config', list])[0]).toMatch(new RegExp(`^config file ${list}: `));
    const missing = join(dir, 'missing.json');
    expect(problems(['--config', missing])).toEqual([`config file ${missing}: cannot read (ENOENT)`]);
  });

  it('holds the pre-stop delay, 5000 ms by default', () => {
    expect(loadConfig({ argv: [], env: {} }).config.shutdownDelayMs).toBe(5_000);
    expect(loadConfig({ argv: ['--shutdown-delay-ms', '0'], env: {} }).config.shutdownDelayMs).toBe(0);
    expect(loadConfig({ argv: [], env: { SHIM_SHUTDOWN_DELAY_MS: '1500' } }).config.shutdownDelayMs).toBe(1_500);
    expect(problems(['--shutdown-delay-ms', 'soon'])).toEqual(['--shutdown-delay-ms: expected a whole number, got "soon"']);
  });
});

describe('what a reload says', () => {
  it('lists the live changes with old and new values, and names settings that need a restart', () => {
    const before = { ...DEFAULT_CONFIG, policies: { default: 'auto' as const, tools: { a: 'forbidden' as const } } };
    const after = {
      ...before,
      legacy: 'off' as const,
      legacyBrownouts: ['2026-06-01T14:00:00Z/2026-06-01T15:00:00Z'],
      policies: { default: 'optional' as const, tools: { b: { mode: 'required' as const } } },
      port: 9090,
      maxBodyBytes: 2_048,
    };
    expect(describeLiveChanges(before, after, 'k', 'k')).toEqual([
      'policies: default auto → optional',
      'policies: a forbidden → (none)',
      'policies: b (none) → {"mode":"required"}',
      'legacy: (none) → off',
      'legacyBrownouts: [] → [2026-06-01T14:00:00Z/2026-06-01T15:00:00Z]',
    ]);
    expect(settingsNeedingRestart(before, after)).toEqual(['port', 'maxBodyBytes']);
    expect(describeLiveChanges(before, before, 'k', 'k')).toEqual([]);
  });

  it('says a rotated key file changed without showing its content', () => {
    const path = writeIn(dir, 'rotating-tokens.json', '{"a-token-of-16-chars-or-more": "team-a"}');
    const auth = { mode: 'tokens' as const, tokensFile: path };
    const before = keyMaterialDigest(auth);
    writeIn(dir, 'rotating-tokens.json', '{"another-token-of-16-chars": "team-a"}');
    const lines = describeLiveChanges({ ...DEFAULT_CONFIG, auth }, { ...DEFAULT_CONFIG, auth }, before, keyMaterialDigest(auth));
    expect(lines).toEqual([`auth: mode tokens, tokens file ${path} re-read`]);
    expect(lines.join()).not.toContain('another-token');
  });
});
