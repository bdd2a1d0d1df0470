using Azure.Core;

namespace Tallyho.Client;

/// <summary>
/// A Tallyho credential (<c>tly1.…</c>), one an admin issued to this app or worker, as a <see cref="TokenCredential"/>:
/// it is sent as it is (<c>Authorization: Bearer tly1.…</c>) wherever a Microsoft Entra ID credential would go.
/// </summary>
/// <example>
/// <code>
/// var tallyho = new TallyhoClient(new Uri("https://tallyho.example.net"), new TallyhoCredential(credential));
/// </code>
/// </example>
public sealed class TallyhoCredential : TokenCredential
{
    private const string Prefix = "tly1.";
    private readonly AccessToken _token;

    /// <summary>Wraps a credential string.</summary>
    /// <param name="credential">The credential, <c>tly1.</c> and the rest, as the admin got it.</param>
    public TallyhoCredential(string credential)
    {
        if (string.IsNullOrEmpty(credential) || !credential.StartsWith(Prefix, StringComparison.Ordinal) || credential.Any(char.IsWhiteSpace))
        {
            throw new ArgumentException($"A Tallyho credential starts with {Prefix}; a function key goes in TallyhoClientOptions.FunctionKey.", nameof(credential));
        }

        // Valid until revoked, as far as the client knows: the app checks its expiry, if it has one.
        _token = new AccessToken(credential, DateTimeOffset.MaxValue);
    }

    /// <inheritdoc />
    public override AccessToken GetToken(TokenRequestContext requestContext, CancellationToken cancellationToken) => _token;

    /// <inheritdoc />
    public override ValueTask<AccessToken> GetTokenAsync(TokenRequestContext requestContext, CancellationToken cancellationToken) => new(_token);
}
