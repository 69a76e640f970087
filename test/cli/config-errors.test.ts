import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXIT_TIMEOUT_MS = 15_000;
const UPSTREAM = 'http://127.0.0.1:9/mcp';
const dir = mkdtempSync(join(tmpdir(), 'mts-cli-'));

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to its exit, bounded; a process still running at the bound is killed and fails the test. */
function runCli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('SHIM_') && !['PORT', 'HOST', 'UPSTREAM_URL', 'REDIS_URL'].includes(name)),
  );
  const child = spawn(process.execPath, ['bin/mcp-tasks-shim.js', ...args], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mcp-tasks-shim ${args.join(' ')} still running after ${EXIT_TIMEOUT_MS} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, EXIT_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function expectConfigError(args: string[], env: Record<string, string>, message: RegExp): Promise<void> {
  const run = await runCli(args, env);
  expect(run.code, run.stderr).toBe(2);
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  expect(run.stderr).not.toMatch(/received undefined/); // each problem once, in its own words
  expect(run.stdout).not.toMatch(/listening on/);
}

describe('mcp-tasks-shim CLI configuration errors exit 2 with a clear message', () => {
  it('--port abc', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--port', 'abc'], {}, /--port: expected a whole number, got "abc"/);
  });

  it('--log-level loud', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--log-level', 'loud'], {}, /--log-level: must be one of fatal, error, warn, info, debug, trace, silent/);
  });

  it('SHIM_LOG_LEVEL=verbose', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM], { SHIM_LOG_LEVEL: 'verbose' }, /SHIM_LOG_LEVEL: must be one of fatal, error/);
  });

  it('--port out of range', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--port', '70000'], {}, /--port: .*65535/);
  });

  it('--job-lock-ms 2s', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--job-lock-ms', '2s'], {}, /--job-lock-ms: expected a whole number, got "2s"/);
  });

  it('SHIM_JOB_LOCK_MS below a second', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM], { SHIM_JOB_LOCK_MS: '500' }, /SHIM_JOB_LOCK_MS: .*1000/);
  });

  it('--shutdown-grace-ms 25s', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--shutdown-grace-ms', '25s'], {}, /--shutdown-grace-ms: expected a whole number, got "25s"/);
  });

  it('SHIM_SHUTDOWN_GRACE_MS over an hour', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM], { SHIM_SHUTDOWN_GRACE_MS: '3600001' }, /SHIM_SHUTDOWN_GRACE_MS: .*3600000/);
  });

  it('--max-open-tasks -1', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--max-open-tasks=-1'], {}, /--max-open-tasks: expected a whole number, got "-1"/);
  });

  it('SHIM_MAX_OPEN_STREAMS_PER_PRINCIPAL=many', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM], { SHIM_MAX_OPEN_STREAMS_PER_PRINCIPAL: 'many' }, /SHIM_MAX_OPEN_STREAMS_PER_PRINCIPAL: expected a whole number, got "many"/);
  });

  it('SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL over a million', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM], { SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL: '1000001' }, /SHIM_MAX_OPEN_TASKS_PER_PRINCIPAL: .*1000000/);
  });

  it('--max-sessions many', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--max-sessions', 'many'], {}, /--max-sessions: expected a whole number, got "many"/);
  });

  it('SHIM_MAX_STREAM_BUFFER_BYTES below 64 KiB', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM], { SHIM_MAX_STREAM_BUFFER_BYTES: '1024' }, /SHIM_MAX_STREAM_BUFFER_BYTES: .*65536/);
  });

  it('--anonymous-principal with a name it does not know', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--anonymous-principal', 'per-ip'], {}, /--anonymous-principal: must be shared or per-address/);
  });

  it('--anonymous-principal per-address outside auth mode none', async () => {
    const tokens = file('per-address-tokens.json', JSON.stringify({ 'a-token-0123456789abcdef': 'alice' }));
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--tokens', tokens, '--anonymous-principal', 'per-address'], {}, /--anonymous-principal: applies to auth mode none only, not tokens/);
  });

  it('SHIM_TRUST_PROXY=maybe', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM], { SHIM_TRUST_PROXY: 'maybe' }, /SHIM_TRUST_PROXY: expected true or false, got "maybe"/);
  });

  it('SHIM_MAX_LISTEN_TASK_IDS=0', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM], { SHIM_MAX_LISTEN_TASK_IDS: '0' }, /SHIM_MAX_LISTEN_TASK_IDS: .*1/);
  });

  it('REDIS_URL=http://x', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM], { REDIS_URL: 'http://x' }, /REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/);
  });

  it('--role api without Redis', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--role', 'api'], {}, /--role: role 'api' needs Redis \(--redis or REDIS_URL\)/);
  });

  it('SHIM_ROLE=worker without Redis', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM], { SHIM_ROLE: 'worker' }, /SHIM_ROLE: role 'worker' needs Redis/);
  });

  it('--role primary', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--role', 'primary', '--redis', 'redis://127.0.0.1:6379'], {}, /--role: must be one of all, api, worker/);
  });

  it('an upstream that is not an http(s) URL', async () => {
    await expectConfigError(['serve', '--upstream', 'ftp://example.com/mcp'], {}, /--upstream: must be an http:\/\/ or https:\/\/ URL/);
  });

  it('serve without an upstream', async () => {
    await expectConfigError(['serve'], {}, /serve needs --upstream/);
  });

  it('--upstream-protocol 2024-11-05', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--upstream-protocol', '2024-11-05'], {}, /--upstream-protocol: must be one of auto, 2025-11-25, 2026-07-28/);
  });

  it('SHIM_UPSTREAM_PROTOCOL=latest', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM], { SHIM_UPSTREAM_PROTOCOL: 'latest' }, /SHIM_UPSTREAM_PROTOCOL: must be one of auto, 2025-11-25, 2026-07-28/);
  });

  it('start --demo with an unknown demo', async () => {
    await expectConfigError(['start', '--demo', 'fancy'], {}, /--demo: expected plain or native, got "fancy"/);
  });

  it('serve --demo native', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--demo', 'native'], {}, /--demo belongs to start/);
  });

  it('an unknown option', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--bogus'], {}, /bogus/);
  });

  it('an unknown command', async () => {
    await expectConfigError(['launch'], {}, /unknown command 'launch'/);
  });

  it('a policy file that does not exist', async () => {
    const missing = join(dir, 'missing.json');
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--policy', missing], {}, /policy file .*missing\.json: cannot read \(ENOENT\)/);
  });

  it('a policy file that is not JSON', async () => {
    const path = file('broken.json', '{"tools": {');
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--policy', path], {}, /policy file .*broken\.json: not JSON/);
  });

  it('a policy file with an unknown policy', async () => {
    const path = file('unknown-policy.json', JSON.stringify({ tools: { greet: 'sometimes' } }));
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--policy', path], {}, /policy file .*unknown-policy\.json: tools\.greet: expected one of forbidden, optional, required, auto \(or an object with "mode"\), got "sometimes"/);
  });

  it('a policy file with an unknown default', async () => {
    const path = file('unknown-default.json', JSON.stringify({ default: 'never', tools: {} }));
    await expectConfigError(['serve', '--upstream', UPSTREAM], { SHIM_POLICY_FILE: path }, /policy file .*unknown-default\.json: default: expected one of forbidden, optional, required, auto/);
  });

  it('a TTL below the 1000 ms minimum', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM], { SHIM_DEFAULT_TTL_MS: '500' }, /SHIM_DEFAULT_TTL_MS: .*1000/);
  });

  it('names the flag, variable or file key the user wrote, never an internal setting name', async () => {
    const policy = file('object-policy.json', JSON.stringify({ tools: { build: { mode: 'later' } } }));
    const run = await runCli(['serve', '--upstream', UPSTREAM, '--brownout', 'tomorrow', '--policy', policy], { SHIM_JWT_SECRET: 'short', SHIM_JOB_LOCK_MS: '10' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--brownout (entry 1): expected <start>/<end>');
    expect(run.stderr).toContain('SHIM_JWT_SECRET: the HS256 secret must be at least 32 bytes');
    expect(run.stderr).toMatch(/SHIM_JOB_LOCK_MS: .*1000/);
    expect(run.stderr).toContain('object-policy.json: tools.build: expected {"mode": forbidden | optional | required | auto');
    expect(run.stderr).not.toMatch(/legacyBrownouts|auth\.key|jobLockMs|Invalid input/);
  });

  it('several problems are all reported at once', async () => {
    const run = await runCli(['serve', '--upstream', UPSTREAM, '--port', 'abc'], { REDIS_URL: 'http://x' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--port/);
    expect(run.stderr).toMatch(/REDIS_URL: must be a redis/);
  });

  it('a tokens file with a token shorter than 16 characters', async () => {
    const path = file('short-tokens.json', JSON.stringify({ short: 'alice' }));
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--tokens', path], {}, /tokens file .*short-tokens\.json: .*the token of principal 'alice' is shorter than 16 characters/);
  });

  it('a tokens file problem never prints the token itself', async () => {
    const path = file('secret-tokens.json', JSON.stringify({ 'shh-secret': 'bob' }));
    const run = await runCli(['serve', '--upstream', UPSTREAM, '--tokens', path]);
    expect(run.code).toBe(2);
    expect(run.stderr).not.toContain('shh-secret');
  });

  it('a tokens file that is missing', async () => {
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--tokens', join(dir, 'no-tokens.json')], {}, /tokens file .*no-tokens\.json/);
  });

  it('a JWT secret shorter than 32 bytes, never printed', async () => {
    const run = await runCli(['serve', '--upstream', UPSTREAM], { SHIM_JWT_SECRET: 'too-short-jwt-secret' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/SHIM_JWT_SECRET: the HS256 secret must be at least 32 bytes/);
    expect(run.stderr).not.toContain('too-short-jwt-secret');
  });

  it('both an HS256 secret and a JWKS file', async () => {
    const jwks = file('jwks.json', JSON.stringify({ keys: [] }));
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--jwks', jwks], { SHIM_JWT_SECRET: 'x'.repeat(32) }, /SHIM_JWT_SECRET and --jwks are both set/);
  });

  it('a JWKS file without a usable key', async () => {
    const jwks = file('empty-jwks.json', JSON.stringify({ keys: [] }));
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--jwks', jwks], {}, /JWKS file .*empty-jwks\.json: no RS256 signing key/);
  });

  it('an upstream header value with CR LF', async () => {
    const headers = file('upstream-headers.json', JSON.stringify({ 'x-api-key': 'k\r\nx-evil: 1' }));
    await expectConfigError(['serve', '--upstream', UPSTREAM, '--upstream-headers-file', headers], {}, /header 'x-api-key' contains CR, LF or NUL/);
  });

  it('--help prints the usage and exits 0', async () => {
    const run = await runCli(['serve', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Usage:/);
  });

  it('no command prints the usage and exits 2', async () => {
    const run = await runCli([]);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/Usage:/);
  });
});
