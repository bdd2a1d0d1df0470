using Azure.Core;

namespace Tallyho.Client.Internal;

/// <summary>
/// One credential's token for the <c>Authorization</c> header, cached and refreshed before it expires by the
/// rules of Azure.Core's <c>BearerTokenAuthenticationPolicy</c> (its access-token cache): a token is used until
/// its <see cref="AccessToken.RefreshOn"/>, or 5 minutes before it expires; from then one refresh runs in the
/// background while requests go on with the token in hand, and a background refresh that fails is tried again
/// 30 s later; with no token, an expired one or a failed first fetch, requests wait for one fetch they share.
/// Not that policy itself: it runs only inside an Azure.Core <c>HttpPipeline</c> (this client sends through the
/// caller's <see cref="HttpClient"/>), reads the system clock where this client's <see cref="TimeProvider"/> is
/// injected (so tests move time instead of waiting), and refuses <c>http</c>, which a local devhost speaks.
/// One difference: the shared fetch is not cancelled by the caller who started it; each caller stops waiting on
/// its own token.
/// </summary>
internal sealed class BearerTokenCache
{
    /// <summary>Azure.Core's default token refresh offset.</summary>
    internal static readonly TimeSpan RefreshOffset = TimeSpan.FromMinutes(5);

    /// <summary>Azure.Core's default delay before a failed background refresh is tried again.</summary>
    internal static readonly TimeSpan RetryDelay = TimeSpan.FromSeconds(30);

    private readonly object _sync = new();
    private readonly TokenCredential _credential;
    private readonly TokenRequestContext _context;
    private readonly TimeProvider _time;

    // The token in hand, or the fetch every caller waits for (under _sync).
    private Task<Entry>? _current;

    // A refresh running while _current stays usable; it never fails (under _sync).
    private Task<Entry>? _background;

    public BearerTokenCache(TokenCredential credential, IReadOnlyList<string> scopes, TimeProvider time)
    {
        _credential = credential;
        _context = new TokenRequestContext(scopes.ToArray());
        _time = time;
    }

    /// <summary>The background refresh running or done and not yet taken up, if any (tests wait on it).</summary>
    internal Task? BackgroundRefresh
    {
        get
        {
            lock (_sync)
            {
                return _background;
            }
        }
    }

    public async ValueTask<string> GetHeaderValueAsync(CancellationToken cancellationToken)
    {
        Task<Entry> current;
        lock (_sync)
        {
            var now = _time.GetUtcNow();
            if (_background is { Status: TaskStatus.RanToCompletion } done && done.Result.ExpiresOn > now)
            {
                _current = done;
                _background = null;
            }

            if (_current is null || _current.IsFaulted || _current.IsCanceled || (_current.Status == TaskStatus.RanToCompletion && now >= _current.Result.ExpiresOn))
            {
                // Started off the lock: a credential may do its work before its first await.
                _current = Task.Run(() => FetchAsync(CancellationToken.None), CancellationToken.None);
                _background = null;
            }
            else if (_current.Status == TaskStatus.RanToCompletion && now >= _current.Result.RefreshOn && _background is null)
            {
                var inHand = _current.Result;
                _background = Task.Run(() => RefreshInBackgroundAsync(inHand), CancellationToken.None);
            }

            current = _current;
        }

        return (await Clock.WaitAsync(current, cancellationToken).ConfigureAwait(false)).HeaderValue;
    }

    private async Task<Entry> RefreshInBackgroundAsync(Entry inHand)
    {
        try
        {
            return await FetchAsync(CancellationToken.None).ConfigureAwait(false);
        }
#pragma warning disable CA1031 // Any failure of the credential: the token in hand is still good, so try again later.
        catch (Exception)
#pragma warning restore CA1031
        {
            return inHand with { RefreshOn = _time.GetUtcNow() + RetryDelay };
        }
    }

    private async Task<Entry> FetchAsync(CancellationToken cancellationToken)
    {
        var token = await _credential.GetTokenAsync(_context, cancellationToken).ConfigureAwait(false);
        var refreshOn = token.RefreshOn
            ?? (token.ExpiresOn - DateTimeOffset.MinValue < RefreshOffset ? token.ExpiresOn : token.ExpiresOn - RefreshOffset);
        return new Entry("Bearer " + token.Token, token.ExpiresOn, refreshOn);
    }

    private sealed record Entry(string HeaderValue, DateTimeOffset ExpiresOn, DateTimeOffset RefreshOn);
}
