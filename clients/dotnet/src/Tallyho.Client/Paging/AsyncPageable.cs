using System.Runtime.CompilerServices;

namespace Tallyho.Client;

/// <summary>
/// A list of the API, the way Azure SDK lists page: enumerate the items (<c>await foreach</c>), or take the API's pages
/// with <see cref="AsPages"/> and keep a page's <see cref="Page{T}.ContinuationToken"/> to resume there later. Each page is
/// fetched when the enumeration reaches it.
/// </summary>
/// <typeparam name="T">The items of the list.</typeparam>
public sealed class AsyncPageable<T> : IAsyncEnumerable<T>
{
    private readonly Func<string?, int?, CancellationToken, Task<Page<T>>> _fetch;
    private readonly CancellationToken _cancellationToken;

    internal AsyncPageable(Func<string?, int?, CancellationToken, Task<Page<T>>> fetch, CancellationToken cancellationToken)
    {
        _fetch = fetch;
        _cancellationToken = cancellationToken;
    }

    /// <summary>The pages, from <paramref name="continuationToken"/> on (from the start without one).</summary>
    /// <param name="continuationToken">A page's <see cref="Page{T}.ContinuationToken"/>: start where that page ended.</param>
    /// <param name="pageSizeHint">At most this many items per page (1-1000; the server's default is 100). A page may hold fewer.</param>
    /// <returns>The pages; the last one has no continuation token.</returns>
    public IAsyncEnumerable<Page<T>> AsPages(string? continuationToken = null, int? pageSizeHint = null) =>
        PagesAsync(continuationToken, pageSizeHint, CancellationToken.None);

    /// <inheritdoc />
    public async IAsyncEnumerator<T> GetAsyncEnumerator(CancellationToken cancellationToken = default)
    {
        await foreach (var page in PagesAsync(null, null, cancellationToken).ConfigureAwait(false))
        {
            foreach (var item in page.Values)
            {
                yield return item;
            }
        }
    }

    private async IAsyncEnumerable<Page<T>> PagesAsync(string? continuationToken, int? pageSizeHint, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(_cancellationToken, cancellationToken);
        var token = continuationToken;
        do
        {
            var page = await _fetch(token, pageSizeHint, linked.Token).ConfigureAwait(false);
            yield return page;
            token = page.ContinuationToken;
        }
        while (token is not null);
    }
}

/// <summary>One page of a list, as the API answered it.</summary>
/// <typeparam name="T">The items of the list.</typeparam>
public sealed class Page<T>
{
    internal Page(IReadOnlyList<T> values, string? continuationToken, IReadOnlyList<UnreadableEntry> unreadable)
    {
        Values = values;
        ContinuationToken = continuationToken;
        Unreadable = unreadable;
    }

    /// <summary>The items of this page.</summary>
    public IReadOnlyList<T> Values { get; }

    /// <summary>Where the next page starts (opaque); null on the last page.</summary>
    public string? ContinuationToken { get; }

    /// <summary>Operator lists: entries of this page whose stored state could not be read; they need an operator.</summary>
    public IReadOnlyList<UnreadableEntry> Unreadable { get; }
}

/// <summary>An entry of an operator list whose stored state could not be read, and why.</summary>
public sealed record UnreadableEntry
{
    /// <summary>The entry's name.</summary>
    public string Name { get; init; } = string.Empty;

    /// <summary>Why it could not be read.</summary>
    public string Detail { get; init; } = string.Empty;
}
