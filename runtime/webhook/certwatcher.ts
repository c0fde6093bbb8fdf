// The serving certificate, kept current from files that cert-manager or a mounted Secret rotate
// (controller-runtime's certwatcher): read and checked at construction, re-read on directory events and
// on a timer, and handed to the registered callbacks whenever the pair changes.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync, watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import tls from "node:tls";
import type { Logger } from "../log.ts";

export interface KeyPair {
  cert: Buffer;
  key: Buffer;
  serialNumber: string;
  validTo: string;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function readPEM(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`cannot read the webhook serving ${what} ${path}: ${messageOf(err)}`, { cause: err });
  }
}

/** Reads and checks the pair; the error names the file at fault, since that is what an operator fixes. */
export function loadKeyPair(certPath: string, keyPath: string): KeyPair {
  const cert = readPEM(certPath, "certificate");
  const key = readPEM(keyPath, "key");
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw new Error(`webhook serving certificate ${certPath} is not a PEM certificate: ${messageOf(err)}`, {
      cause: err,
    });
  }
  try {
    if (!x509.checkPrivateKey(createPrivateKey(key))) {
      throw new Error(`webhook serving key ${keyPath} does not belong to the certificate ${certPath}`);
    }
    // Catches what the checks above do not, e.g. a broken intermediate later in the certificate file.
    tls.createSecureContext({ cert, key });
  } catch (err) {
    const msg = messageOf(err);
    throw new Error(msg.includes(keyPath) ? msg : `webhook serving key ${keyPath} is unusable: ${msg}`, { cause: err });
  }
  return { cert, key, serialNumber: x509.serialNumber, validTo: x509.validTo };
}

interface CertWatcherOptions {
  certDir: string;
  /** Default "tls.crt". */
  certName?: string;
  /** Default "tls.key". */
  keyName?: string;
  /** How often the files are re-read in case a change was not reported by fs.watch (default 10 s). */
  pollIntervalMs?: number;
  logger: Logger;
}

export class CertWatcher {
  readonly certDir: string;
  readonly certPath: string;
  readonly keyPath: string;
  private readonly pollIntervalMs: number;
  private readonly logger: Logger;
  private pair: KeyPair;
  private readonly callbacks: Array<(pair: KeyPair) => void> = [];
  // Reloads run one after the other, so two events never install pairs out of order.
  private reloading: Promise<boolean> = Promise.resolve(false);
  private lastFailure: string | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private poll: NodeJS.Timeout | undefined;
  private watcher: FSWatcher | undefined;

  /** Throws, naming the file, when the pair cannot be used: a server must not start without one. */
  constructor(o: CertWatcherOptions) {
    this.certDir = o.certDir;
    this.certPath = join(o.certDir, o.certName ?? "tls.crt");
    this.keyPath = join(o.certDir, o.keyName ?? "tls.key");
    this.pollIntervalMs = o.pollIntervalMs ?? 10_000;
    this.logger = o.logger;
    this.pair = loadKeyPair(this.certPath, this.keyPath);
  }

  get current(): KeyPair {
    return this.pair;
  }

  /** Called with each new pair before it becomes current (controller-runtime's RegisterCallback). */
  registerCallback(fn: (pair: KeyPair) => void): void {
    this.callbacks.push(fn);
  }

  /**
   * Re-reads the files now. Resolves true when a new pair was installed, false when they are unchanged;
   * rejects (keeping the current pair) when they are missing, invalid or mismatched.
   */
  reload(): Promise<boolean> {
    const next = () => this.reloadNow();
    this.reloading = this.reloading.then(next, next);
    return this.reloading;
  }

  /** Starts watching the directory and polling; stop() ends both. */
  start(): void {
    this.watchDir();
    // fs.watch misses changes on some filesystems (network, overlay) and after the directory is replaced.
    this.poll = setInterval(() => this.reloadQuietly(), this.pollIntervalMs);
    this.poll.unref();
  }

  /** Stops watching; resolves once a reload already under way has finished. */
  stop(): Promise<void> {
    clearInterval(this.poll);
    clearTimeout(this.debounce);
    this.watcher?.close();
    this.watcher = undefined;
    return this.reloading.then(
      () => undefined,
      () => undefined,
    );
  }

  private reloadNow(): boolean {
    const next = loadKeyPair(this.certPath, this.keyPath);
    if (next.cert.equals(this.pair.cert) && next.key.equals(this.pair.key)) return false;
    for (const fn of this.callbacks) fn(next);
    this.pair = next;
    this.logger.info("Updated the webhook serving certificate", {
      certPath: this.certPath,
      serialNumber: next.serialNumber,
      validTo: next.validTo,
    });
    return true;
  }

  private reloadQuietly(): void {
    this.reload().then(
      () => (this.lastFailure = undefined),
      (err: unknown) => {
        // Writers replace the two files one after the other, so a mismatched pair is often transient;
        // the next event or poll picks up the completed pair. Repeats of one failure are logged once.
        const msg = messageOf(err);
        if (msg !== this.lastFailure)
          this.logger.error("Cannot load the new webhook serving certificate; keeping the current one", err);
        this.lastFailure = msg;
      },
    );
  }

  private watchDir(): void {
    const onChange = () => {
      // A rotation is several file events in a row; one reload after they settle is enough.
      clearTimeout(this.debounce);
      this.debounce = setTimeout(() => this.reloadQuietly(), 100);
      this.debounce.unref();
    };
    const certDir = this.certDir;
    try {
      // The directory rather than the files: Secret volumes replace a "..data" symlink, and editors and
      // cert-manager rename files into place, neither of which a watch on the old file would see.
      this.watcher = watch(certDir, { persistent: false }, onChange);
      this.watcher.on("error", (err) => {
        this.logger.error("Watching the webhook certificate directory failed; relying on polling", err, { certDir });
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch (err) {
      this.logger.error("Cannot watch the webhook certificate directory; relying on polling", err, { certDir });
    }
  }
}
