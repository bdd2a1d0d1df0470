/**
 * A Microsoft Entra tenant on this machine, for the tests of clients that speak Entra (a fake: Entra
 * itself cannot be reached here). One HTTP server plays the two parts a client and the app meet:
 *
 * - the tenant's signing keys, `<authority>/<tenant>/discovery/v2.0/keys`, which the app reads when
 *   TALLYHO_ENTRA_AUTHORITY points at this server (as test/unit/identity/tokens.test.ts does);
 * - App Service's managed identity endpoint (`IDENTITY_ENDPOINT`, `IDENTITY_HEADER`), as Microsoft's
 *   "Managed identities for App Service" REST reference describes it: `GET ?resource=…&api-version=
 *   2019-08-01` with the `X-IDENTITY-HEADER` secret, answering `access_token`, `expires_on` (epoch
 *   seconds, a string), `resource`, `token_type`, `client_id`. So `new DefaultAzureCredential()` of the
 *   real Azure Identity libraries (JavaScript and .NET) gets its tokens here, by its managed identity
 *   path, exactly as in an app on App Service.
 *
 * Tokens are v2 access tokens as Entra issues them for an app registration: RS256, issuer
 * `<authority>/<tenant>/v2.0`, audience the app's client id whether the resource was asked for as
 * `api://<app id>` or as the id itself, `oid` the identity's object id, `roles` its app roles.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { exportJWK, generateKeyPair, type JWK, type KeyLike, SignJWT } from 'jose';

export interface LocalTenant {
  readonly tenantId: string;
  /** The Tallyho app registration's application (client) id: the audience of its tokens. */
  readonly appId: string;
  /** Its Application ID URI, what a client asks tokens for (`<audience>/.default`). */
  readonly audience: string;
  /** The managed identity's object id: the app names the caller `entra:<oid>`. */
  readonly identityObjectId: string;
  /** App settings of a Tallyho host that accepts this tenant's tokens (mode `entra`). */
  readonly appSettings: Readonly<Record<string, string>>;
  /** Environment that makes Azure Identity's managed identity credential ask this tenant. */
  readonly managedIdentityEnv: Readonly<Record<string, string>>;
  /** Token requests the managed identity endpoint has answered. */
  readonly tokensIssued: () => number;
  /** An access token for this app as the tenant issues it to another identity: its object id and app roles. */
  readonly tokenFor: (objectId: string, roles: readonly string[]) => Promise<string>;
  close(): Promise<void>;
}

export interface LocalTenantOptions {
  /** App roles of the managed identity's tokens (default `Tallyho.Admin`). */
  readonly roles?: readonly string[];
  /** How long its tokens last (default an hour, as Entra's). */
  readonly tokenLifetimeSeconds?: number;
}

export async function startLocalTenant(options: LocalTenantOptions = {}): Promise<LocalTenant> {
  const tenantId = randomUUID();
  const appId = randomUUID();
  const audience = `api://${appId}`;
  const identityObjectId = randomUUID();
  const identityHeader = randomUUID();
  const lifetime = options.tokenLifetimeSeconds ?? 3600;
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'local-1', alg: 'RS256', use: 'sig' };
  let issued = 0;
  let authority = '';

  const mint = (
    resource: string,
    key: KeyLike,
    oid: string = identityObjectId,
    roles: readonly string[] = options.roles ?? ['Tallyho.Admin'],
  ): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    // Entra's v2 tokens name the app by its client id, however the resource was asked for.
    const aud = resource === audience ? appId : resource;
    return new SignJWT({ oid, roles: [...roles], azp: randomUUID() })
      .setProtectedHeader({ alg: 'RS256', kid: 'local-1', typ: 'JWT' })
      .setIssuer(`${authority}/${tenantId}/v2.0`)
      .setAudience(aud)
      .setSubject(oid)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + lifetime)
      .sign(key);
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const answer = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && url.pathname === `/${tenantId}/discovery/v2.0/keys`) {
      answer(200, { keys: [jwk] });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/msi/token') {
      const resource = url.searchParams.get('resource');
      if (req.headers['x-identity-header'] !== identityHeader) return answer(401, { error: 'invalid_request' });
      if (url.searchParams.get('api-version') !== '2019-08-01' || resource === null || resource === '')
        return answer(400, { statusCode: 400, message: 'resource and api-version=2019-08-01 are required' });
      issued++;
      void mint(resource, privateKey).then((token) =>
        answer(200, {
          access_token: token,
          expires_on: String(Math.floor(Date.now() / 1000) + lifetime),
          resource,
          token_type: 'Bearer',
          client_id: randomUUID(),
        }),
      );
      return;
    }
    answer(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  authority = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    tenantId,
    appId,
    audience,
    identityObjectId,
    appSettings: {
      TALLYHO_AUTH_MODE: 'entra',
      TALLYHO_ENTRA_TENANT_ID: tenantId,
      TALLYHO_ENTRA_AUDIENCES: appId,
      TALLYHO_ENTRA_AUTHORITY: authority,
    },
    managedIdentityEnv: { IDENTITY_ENDPOINT: `${authority}/msi/token`, IDENTITY_HEADER: identityHeader },
    tokensIssued: () => issued,
    tokenFor: (objectId, roles) => mint(audience, privateKey, objectId, roles),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
