/**
 * A self-signed certificate for a local HTTPS server that a test client trusts through `ca`, made by
 * the `selfsigned` package (EC P-256, the given DNS names and IPs as subjectAltName, valid from an hour
 * ago for a day). The certificate used to be encoded by hand here; about one in 256 came out with a
 * serial number that OpenSSL refuses ("asn1 encoding routines::illegal padding"), which failed a CI run.
 */
import { generate } from 'selfsigned';

export interface SelfSigned {
  readonly cert: string;
  readonly key: string;
}

export async function selfSignedCert(names: readonly string[], ips: readonly string[] = []): Promise<SelfSigned> {
  const now = Date.now();
  const pems = await generate([{ name: 'commonName', value: names[0] ?? 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    notBeforeDate: new Date(now - 3600_000),
    notAfterDate: new Date(now + 24 * 3600_000),
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [...names.map((value) => ({ type: 2 as const, value })), ...ips.map((ip) => ({ type: 7 as const, ip }))],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}
