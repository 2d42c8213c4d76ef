/**
 * A `worker.ssh_hosts` entry, `[user@]host[:port]`, as OpenSSH writes a destination. An IPv6
 * address carries a port only in brackets (`[::1]:2222`), as in known_hosts, so a bare `::1`
 * is a host with no port. No user: the login name of whoever runs Lorenz.
 */
export interface SshHost {
  user: string | null;
  host: string;
  port: number;
}

export const DEFAULT_SSH_PORT = 22;

const USER = /^[A-Za-z0-9._][A-Za-z0-9._-]*$/;
const HOST_NAME =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const IPV6 = /^[0-9A-Fa-f:.]+$/;

/** The entry, or why it is not one (a sentence fragment for `worker.ssh_hosts[i]: …`). */
export function parseSshHost(text: string): SshHost | { error: string } {
  const rule = 'must be [user@]host[:port]';
  const at = text.lastIndexOf('@');
  const user = at === -1 ? null : text.slice(0, at);
  if (user !== null && !USER.test(user)) return { error: `${rule}; the user is not a login name` };
  let rest = text.slice(at + 1);
  let port = DEFAULT_SSH_PORT;
  let host: string;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close === -1) return { error: `${rule}; an unclosed [` };
    host = rest.slice(1, close);
    rest = rest.slice(close + 1);
    if (!IPV6.test(host) || !host.includes(':'))
      return { error: `${rule}; [${host}] is not an IPv6 address` };
    if (rest !== '' && !rest.startsWith(':')) return { error: rule };
  } else if (rest.split(':').length > 2) {
    host = rest;
    rest = '';
    if (!IPV6.test(host)) return { error: rule };
  } else {
    const colon = rest.indexOf(':');
    host = colon === -1 ? rest : rest.slice(0, colon);
    rest = colon === -1 ? '' : rest.slice(colon);
    if (!HOST_NAME.test(host))
      return { error: `${rule}; ${JSON.stringify(host)} is not a host name` };
  }
  if (rest !== '') {
    const digits = rest.slice(1);
    port = /^\d{1,5}$/.test(digits) ? Number(digits) : NaN;
    if (!(port >= 1 && port <= 65_535)) return { error: `${rule}; the port is not 1-65535` };
  }
  return { user, host, port };
}

/** How a host is named in messages and in known_hosts: `[host]:port` unless the port is 22. */
export function knownHostsName(host: Pick<SshHost, 'host' | 'port'>): string {
  return host.port === DEFAULT_SSH_PORT ? host.host : `[${host.host}]:${host.port}`;
}

export function describeSshHost(host: SshHost): string {
  return `${host.user === null ? '' : `${host.user}@`}${knownHostsName(host)}`;
}
