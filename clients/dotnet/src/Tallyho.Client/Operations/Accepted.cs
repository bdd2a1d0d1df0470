namespace Tallyho.Client.Operations;

/// <summary>What a 202 tells a client in its headers (docs/http-api.md#long-running-operations).</summary>
internal static class Accepted
{
    /// <summary>The operation's status route, from <c>Location</c> (the body's <c>statusUri</c> is the same).</summary>
    public static string StatusUri(HttpResponseMessage response) =>
        response.Headers.Location is { } location
            ? location.IsAbsoluteUri ? location.AbsolutePath : location.OriginalString
            : throw new TallyhoException((int)response.StatusCode, "InvalidResponse", "A 202 without a Location: no status route to follow");

    /// <summary>The 202's <c>Retry-After</c> (whole seconds, as the API sends it), or <paramref name="fallback"/>.</summary>
    public static TimeSpan RetryAfter(HttpResponseMessage response, TimeSpan fallback) =>
        response.Headers.RetryAfter?.Delta is { } delta && delta > TimeSpan.Zero ? delta : fallback;
}
