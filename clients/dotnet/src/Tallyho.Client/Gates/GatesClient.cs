using Tallyho.Client.Internal;

namespace Tallyho.Client.Gates;

/// <summary>The gates as operators see them (admin key); one gate's own calls are on <see cref="GateClient"/>.</summary>
public sealed class GatesClient
{
    private readonly TallyhoHttp _http;

    internal GatesClient(TallyhoHttp http) => _http = http;

    /// <summary>Gates with their state and waiters, in name order.</summary>
    /// <param name="cancellationToken">Stops the listing.</param>
    /// <returns>The gates, a page at a time.</returns>
    public AsyncPageable<GateState> ListAsync(CancellationToken cancellationToken = default) =>
        Lists.Of<GateState>(_http, "gates", KeyLevel.Admin, cancellationToken);
}
