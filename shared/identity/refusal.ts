/**
 * Why a presented token or credential is refused, in words a caller can act on: one 401 problem per
 * cause (wrong issuer, wrong audience, expired, not yet valid, unsigned, unknown key, key set out of
 * reach). The detail never echoes the token; what the library said goes to the log only.
 */
import { errors } from 'jose';

import { AppError } from '../errors';

export function unauthorized(detail: string, internal?: string): AppError {
  return new AppError('Unauthorized', detail, {
    extra: { authentication: 'refused' },
    ...(internal === undefined ? {} : { internal }),
  });
}

/** An identity the app knows that lacks the role a route needs. */
export function forbidden(detail: string): AppError {
  return new AppError('Forbidden', detail);
}

const claimWords: Readonly<Record<string, string>> = {
  iss: 'was issued by another issuer than this app accepts',
  aud: 'is meant for another audience than this app',
  nbf: 'is not valid yet (nbf)',
  iat: 'was issued in the future (iat)',
  exp: 'has expired',
};

/** A jose failure (or a key-set fetch failure) as the 401 a caller gets; `what` names the token kind. */
export function refusalOf(err: unknown, what: string): AppError {
  const internal = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  if (err instanceof errors.JWTExpired) return unauthorized(`The ${what} has expired: get a new one`, internal);
  if (err instanceof errors.JWTClaimValidationFailed) {
    const words = claimWords[err.claim] ?? `fails its "${err.claim}" claim check`;
    return unauthorized(`The ${what} ${words}`, internal);
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) {
    return unauthorized(`The ${what} is not signed with an algorithm this app accepts`, internal);
  }
  if (err instanceof errors.JWKSNoMatchingKey) return unauthorized(`The ${what} is signed with a key this app does not know`, internal);
  if (err instanceof errors.JWSSignatureVerificationFailed) return unauthorized(`The ${what}'s signature does not verify`, internal);
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || !(err instanceof errors.JOSEError)) {
    return unauthorized(`The ${what} cannot be checked now: the issuer's signing keys could not be fetched; try again later`, internal);
  }
  return unauthorized(`The ${what} is not a valid signed token`, internal);
}
