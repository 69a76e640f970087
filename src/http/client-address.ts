import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';

/**
 * The address of the client a request comes from. Behind a proxy (`trustProxy`), the last entry
 * of `X-Forwarded-For`: the one the proxy in front of the shim appended; earlier entries are the
 * client's to write. Without `trustProxy` the header is ignored: anyone could send it.
 */
export function clientAddress(headers: IncomingHttpHeaders, peer: string | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = headers['x-forwarded-for'];
    const last = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded)?.split(',').pop()?.trim();
    if (last && isIP(unmapped(last))) return unmapped(last);
  }
  return unmapped(peer ?? 'unknown');
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are one client. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
