// A TCP relay on loopback in front of a server (the apiserver, in the integration tests): a
// test cuts the connections through it, refuses new ones, or freezes them half-open, to show
// what the controller does when its way to the apiserver breaks or hangs.
import net from 'node:net';

export interface TcpRelay {
  /** The relay's address as an https URL: the apiserver's TLS passes through it untouched. */
  url: string;
  /** Breaks every open connection; with `refuse`, new ones are refused until `restore()`. */
  cut(refuse: boolean): void;
  /** New connections are relayed again. */
  restore(): void;
  /**
   * Open connections stay open and carry nothing more (a half-open watch); with `hangNew`, new
   * ones are accepted and go nowhere too (an apiserver that hangs).
   */
  freeze(hangNew?: boolean): void;
  /** Breaks every connection and stops listening. */
  close(): Promise<void>;
  /** Connections accepted so far. */
  connections(): number;
}

export async function startTcpRelay(target: URL): Promise<TcpRelay> {
  const pairs = new Set<[net.Socket, net.Socket]>();
  let refusing = false;
  let accepted = 0;
  const server = net.createServer((inbound) => {
    if (refusing) return inbound.destroy();
    accepted += 1;
    const outbound = net.connect(Number(target.port), target.hostname);
    const pair: [net.Socket, net.Socket] = [inbound, outbound];
    pairs.add(pair);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    const drop = () => {
      inbound.destroy();
      outbound.destroy();
      pairs.delete(pair);
    };
    inbound.on('error', drop).on('close', drop);
    outbound.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const destroyAll = () => {
    for (const [inbound, outbound] of pairs) {
      inbound.destroy();
      outbound.destroy();
    }
  };
  return {
    url: `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cut(refuse) {
      refusing = refuse;
      destroyAll();
    },
    restore() {
      refusing = false;
    },
    freeze(hangNew = false) {
      for (const [inbound, outbound] of pairs) {
        inbound.unpipe(outbound);
        outbound.unpipe(inbound);
      }
      if (!hangNew) return;
      server.removeAllListeners('connection');
      server.on('connection', (socket: net.Socket) => socket.on('error', () => undefined));
    },
    connections: () => accepted,
    close() {
      destroyAll();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
