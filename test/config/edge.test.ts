import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { configProblems } from '../support/config-problems.js';

describe('edge settings', () => {
  it('defaults to 10 s for headers, 30 s for a request, 10,000 connections, no proxy trusted', () => {
    const { config } = loadConfig({ argv: [], env: {} });
    expect(config).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, maxConnections: 10_000, trustProxy: false });
  });

  it('reads flags over the environment', () => {
    const { config } = loadConfig({
      argv: ['--headers-timeout-ms', '2000', '--max-connections', '0', '--trust-proxy'],
      env: { SHIM_HEADERS_TIMEOUT_MS: '5000', SHIM_REQUEST_TIMEOUT_MS: '4000', SHIM_MAX_CONNECTIONS: '7', SHIM_TRUST_PROXY: 'false' },
    });
    expect(config).toMatchObject({ headersTimeoutMs: 2_000, requestTimeoutMs: 4_000, maxConnections: 0, trustProxy: true });
  });

  it('refuses a headers timeout longer than the request timeout, and bounds out of range', () => {
    expect(configProblems(['--headers-timeout-ms', '20000', '--request-timeout-ms', '10000'])).toEqual(['headersTimeoutMs: must not exceed requestTimeoutMs']);
    expect(configProblems(['--headers-timeout-ms', '10'])).toEqual([expect.stringMatching(/^headersTimeoutMs: /)]);
    expect(configProblems([], { SHIM_MAX_CONNECTIONS: 'many' })).toEqual(['SHIM_MAX_CONNECTIONS: expected a whole number, got "many"']);
  });
});
