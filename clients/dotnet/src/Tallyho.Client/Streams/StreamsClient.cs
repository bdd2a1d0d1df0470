using Tallyho.Client.Internal;

namespace Tallyho.Client.Streams;

/// <summary>The streams' routes as operators see them (admin key); events go through <see cref="StreamProducer"/>.</summary>
public sealed class StreamsClient
{
    private readonly TallyhoHttp _http;

    internal StreamsClient(TallyhoHttp http) => _http = http;

    /// <summary>Event types callers wrote to or an operator remapped, in type order, each with its route (own or default).</summary>
    /// <param name="cancellationToken">Stops the listing.</param>
    /// <returns>The routes, a page at a time.</returns>
    public AsyncPageable<StreamRoute> ListAsync(CancellationToken cancellationToken = default) =>
        Lists.Of<StreamRoute>(_http, "streams", KeyLevel.Admin, cancellationToken);
}
