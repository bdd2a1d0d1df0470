using System.Globalization;
using Tallyho.Client.Internal;

namespace Tallyho.Client;

/// <summary>Every list of the API as an <see cref="AsyncPageable{T}"/>: <c>maxPageSize</c> and <c>continuationToken</c> in, <c>{ items, continuationToken }</c> out.</summary>
internal static class Lists
{
    /// <param name="http">Sends the requests.</param>
    /// <param name="path">The list's path below <c>api/</c>.</param>
    /// <param name="filters">The list's own query parameters (null values left out).</param>
    /// <param name="key">The key the list needs.</param>
    /// <param name="cancellationToken">Stops the listing.</param>
    public static AsyncPageable<T> Of<T>(TallyhoHttp http, string path, IReadOnlyDictionary<string, string?> filters, KeyLevel key, CancellationToken cancellationToken) =>
        new(
            async (token, size, ct) =>
            {
                var query = new List<string>();
                foreach (var pair in filters)
                {
                    if (pair.Value is not null)
                    {
                        query.Add(pair.Key + "=" + Uri.EscapeDataString(pair.Value));
                    }
                }

                if (size is not null)
                {
                    query.Add("maxPageSize=" + size.Value.ToString(CultureInfo.InvariantCulture));
                }

                if (token is not null)
                {
                    query.Add("continuationToken=" + Uri.EscapeDataString(token));
                }

                var target = query.Count == 0 ? path : path + "?" + string.Join("&", query);
                var page = await http.SendJsonAsync<WirePage<T>>(new TallyhoRequest(HttpMethod.Get, target) { Idempotent = true, Key = key }, ct).ConfigureAwait(false);
                return new Page<T>(page.Items ?? Array.Empty<T>(), page.ContinuationToken, page.Unreadable ?? Array.Empty<UnreadableEntry>());
            },
            cancellationToken);

    /// <summary>A list without filters of its own.</summary>
    public static AsyncPageable<T> Of<T>(TallyhoHttp http, string path, KeyLevel key, CancellationToken cancellationToken) =>
        Of<T>(http, path, new Dictionary<string, string?>(), key, cancellationToken);

    private sealed record WirePage<T>(IReadOnlyList<T>? Items, string? ContinuationToken, IReadOnlyList<UnreadableEntry>? Unreadable);
}
