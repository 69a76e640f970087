import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const COOKIE = 'mts_dashboard';
/** What the cookie's value is derived from the token with: the same on every replica that has the token. */
const COOKIE_LABEL = 'mcp-tasks-shim dashboard cookie v1';

export interface AccessGuardOptions {
  /** Bearer token for the dashboard and metrics; without one only loopback clients get in. */
  token?: string;
  /** Believe `X-Forwarded-Proto`: a browser that reached the proxy over TLS gets a `Secure` cookie. */
  trustProxy?: boolean;
}

/**
 * With a token: `Authorization: Bearer <token>`, or the cookie that `GET /dashboard?token=<token>`
 * sets for a browser. The cookie holds an HMAC of the token, never the token, and is the same
 * whichever replica set it. Every comparison is of SHA-256 digests, so its time says nothing
 * about the token, its length included.
 *
 * Without one: loopback clients (the socket's peer address, so a proxy on the same host passes:
 * set a token behind one) that address the shim by a loopback name. The Host check stops DNS
 * rebinding: a page whose own name the attacker points at 127.0.0.1 gets its name in `Host`.
 */
export function accessGuard(options: AccessGuardOptions) {
  const { token, trustProxy = false } = options;
  if (token === undefined) return loopbackOnly;
  const tokenDigest = digest(token);
  const cookieValue = createHmac('sha256', token).update(COOKIE_LABEL).digest('base64url');
  const cookieDigest = digest(cookieValue);
  return (req: Request, res: Response, next: NextFunction): void => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (matches(bearer, tokenDigest) || matches(cookie(req.headers.cookie, COOKIE), cookieDigest)) return next();
    const query = typeof req.query.token === 'string' ? req.query.token : undefined;
    if (req.path === '/dashboard' && req.method === 'GET' && matches(query, tokenDigest)) {
      res.cookie(COOKIE, cookieValue, { httpOnly: true, sameSite: 'strict', path: '/dashboard', secure: cameOverTls(req, trustProxy) });
      res.redirect(303, '/dashboard');
      return;
    }
    res.set('www-authenticate', 'Bearer realm="mcp-tasks-shim"');
    if (req.path === '/dashboard' || req.path === '/dashboard/') {
      res
        .status(401)
        .type('html')
        .send('<!doctype html><title>Sign in</title><p>This dashboard needs its token: open <code>/dashboard?token=&lt;token&gt;</code> once.</p>');
      return;
    }
    res.status(401).json({ error: 'missing or invalid bearer token' });
  };
}

function loopbackOnly(req: Request, res: Response, next: NextFunction): void {
  if (!isLoopback(req.socket.remoteAddress)) {
    res.status(403).json({ error: 'the dashboard and metrics answer loopback clients only; set SHIM_DASHBOARD_TOKEN to open them to others' });
    return;
  }
  if (!isLoopbackHost(req.headers.host)) {
    res.status(403).json({ error: 'without a dashboard token, the dashboard and metrics answer requests addressed to localhost, 127.0.0.1 or [::1] only' });
    return;
  }
  next();
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  if (address === '::1') return true;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** A `Host` header naming the loopback interface: `localhost`, `127.x.y.z` or `[::1]`, with or without a port. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d*$/, '');
  const rest = host.slice(name.length);
  if (rest !== '' && !/^:\d*$/.test(rest)) return false;
  return name.toLowerCase() === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** TLS on this socket, or (with `trustProxy`) at the proxy, by the first `X-Forwarded-Proto` value (the client's hop). */
function cameOverTls(req: Request, trustProxy: boolean): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  if (!trustProxy) return false;
  const header = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(header) ? header[0] : header)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https';
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function matches(given: string | undefined, expected: Buffer): boolean {
  return given !== undefined && timingSafeEqual(digest(given), expected);
}

function cookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) {
      try {
        return decodeURIComponent(rest.join('='));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
