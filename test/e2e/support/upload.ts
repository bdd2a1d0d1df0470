/**
 * Large uploads for the body-limit tests: a body sent 64 KiB at a time as fast as the server takes
 * it, until the answer arrives or all of it is sent, and the memory of the real host's processes.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';

import type { E2eHost } from './harness';
import { processIds } from '../../support/cpuByProcess.cjs';

export interface UploadOptions {
  readonly method?: string;
  readonly key: string;
  readonly total: number;
  /** Declare the size in Content-Length (default: chunked, no length). */
  readonly declareLength?: boolean;
  readonly contentType?: string;
}

export interface UploadResult {
  /** The answer's status; 0 when the connection ended without one. */
  readonly status: number;
  /** Bytes handed to the socket before the answer (or the end): the most the server can have read. */
  readonly sent: number;
  readonly ms: number;
}

const chunk = Buffer.alloc(64 * 1024, 0x20);

export function upload(host: E2eHost, path: string, options: UploadOptions): Promise<UploadResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const url = new URL(host.url(path));
    let sent = 0;
    let done = false;
    const finish = (status: number): void => {
      if (done) return;
      done = true;
      resolve({ status, sent, ms: Date.now() - started });
    };
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: options.method ?? 'PUT',
        headers: {
          'content-type': options.contentType ?? 'application/json',
          'x-functions-key': options.key,
          ...(options.declareLength === true ? { 'content-length': String(options.total) } : {}),
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        res.on('end', () => finish(status));
        res.on('error', () => finish(status));
        req.destroy();
      },
    );
    // A server that answers and closes while the body is still on its way resets the connection;
    // the answer, when there was one, has been taken already.
    req.on('error', () => setTimeout(() => finish(0), 200));
    const pump = (): void => {
      while (!done && !req.destroyed && sent < options.total) {
        const piece = Math.min(chunk.length, options.total - sent);
        sent += piece;
        if (!req.write(piece === chunk.length ? chunk : chunk.subarray(0, piece))) {
          req.once('drain', pump);
          return;
        }
      }
      if (!done && !req.destroyed) req.end();
    };
    pump();
  });
}

/** Resident memory now and at its peak (kB) of one process, from /proc (Linux). */
function memoryOf(pid: string): { rssKb: number; peakKb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 'NaN');
    return { rssKb: kb('VmRSS'), peakKb: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

/**
 * The real host's own process (the one whose ASPNETCORE_URLS is this host's address) and its
 * memory, on Linux; undefined elsewhere or when it cannot be found.
 */
export function realHostMemory(host: E2eHost): { rssKb: number; peakKb: number } | undefined {
  const wanted = `ASPNETCORE_URLS=${host.baseUrl}\0`;
  const pids = processIds();
  if (pids === undefined) return undefined;
  for (const pid of pids) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes('Microsoft.Azure.WebJobs.Script.WebHost')) continue;
      if (!`${readFileSync(`/proc/${pid}/environ`, 'utf8')}\0`.includes(wanted)) continue;
      return memoryOf(pid);
    } catch {
      // gone, or not ours
    }
  }
  return undefined;
}
