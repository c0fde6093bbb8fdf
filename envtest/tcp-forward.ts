// A TCP forwarder from one local address to another: how pods on the local cluster's bridge reach the
// apiserver, which listens on loopback only. Bytes pass through untouched (TLS ends at the apiserver).
import { connect, createServer, type Server, type Socket } from "node:net";

export interface TCPForwarder {
  readonly listen: { host: string; port: number };
  close(): Promise<void>;
}

/** Listen on listenHost:listenPort and pipe every connection to targetHost:targetPort. */
export async function forwardTCP(
  listenHost: string,
  listenPort: number,
  targetHost: string,
  targetPort: number,
): Promise<TCPForwarder> {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  };
  const server: Server = createServer((inbound) => {
    track(inbound);
    const outbound = connect({ host: targetHost, port: targetPort });
    track(outbound);
    // Either side failing or ending ends both: a pod sees its connection drop as the apiserver's would.
    const both = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on("error", both);
    outbound.on("error", both);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: listenHost, port: listenPort }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    listen: { host: listenHost, port: listenPort },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
