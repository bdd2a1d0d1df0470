/**
 * Response headers of the console. The policy allows only the app's own scripts, styles and API
 * calls: no inline script or style, no other origin, no framing, no plugins.
 */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const securityHeaders: Readonly<Record<string, string>> = {
  'content-security-policy': contentSecurityPolicy,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** The page may change with any deployment; the hashed assets never do. */
export const pageCaching = { 'cache-control': 'no-cache' };
export const assetCaching = { 'cache-control': 'public, max-age=31536000, immutable' };
