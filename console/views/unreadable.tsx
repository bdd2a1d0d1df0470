/** Entries of a listing whose stored state could not be read, and whether the list was cut short. */
import type { Listing } from '../types';

export function Unreadable({ listing, what }: { listing: Listing<unknown> | undefined; what: string }) {
  if (listing === undefined) return null;
  return (
    <>
      {listing.unreadable.length > 0 ? (
        <div class="problem" role="alert">
          <p class="problem-title">Unreadable {what}</p>
          <ul>
            {listing.unreadable.map((u) => (
              <li key={u.name}>
                <strong>{u.name}</strong>: {u.detail}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {listing.truncated ? (
        <p class="hint">
          Showing the first {listing.items.length} {what}.
        </p>
      ) : null}
    </>
  );
}
