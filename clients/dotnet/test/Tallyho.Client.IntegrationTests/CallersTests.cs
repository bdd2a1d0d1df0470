using Tallyho.Client.Callers;

namespace Tallyho.Client.IntegrationTests;

/// <summary>Named callers through <see cref="CallersClient"/>, against the devhost (TALLYHO_CREDENTIALS_KEY set by its host).</summary>
[Collection("devhost")]
public sealed class CallersTests
{
    private readonly DevhostFixture _host;

    public CallersTests(DevhostFixture host) => _host = host;

    [Fact]
    public async Task An_issued_credential_names_its_caller_until_it_is_revoked_and_no_list_shows_a_secret()
    {
        var name = $"dotnet-{Guid.NewGuid().ToString("N").Substring(0, 10)}";
        await using var admin = _host.Admin();
        var issued = await admin.Callers.IssueAsync(name, ["submitter"]);
        Assert.Equal($"cred:{name}", issued.Id);
        Assert.Equal("active", issued.State);
        Assert.False(string.IsNullOrEmpty(issued.Credential));

        // The credential beside the function key names the caller, with its roles.
        await using (var caller = _host.Client(o => o.Credential = new TallyhoCredential(issued.Credential)))
        {
            var me = await caller.Callers.MeAsync();
            Assert.Equal(($"cred:{name}", "credential"), (me.Id, me.Kind));
            Assert.Equal(["submitter"], me.Roles);
        }

        var listed = Assert.Single(await admin.Callers.ListAsync(), c => c.Name == name);
        Assert.Equal(issued.CredentialId, listed.CredentialId);
        Assert.IsNotType<IssuedCaller>(listed);

        var revoked = await admin.Callers.RevokeAsync(name);
        Assert.Equal("revoked", revoked.State);
        Assert.NotNull(revoked.RevokedAt);
        // Refused at once on the instance that revoked it (the devhost is one instance).
        await using (var caller = _host.Client(o => o.Credential = new TallyhoCredential(issued.Credential)))
        {
            var refused = await Assert.ThrowsAsync<TallyhoException>(() => caller.Callers.MeAsync());
            Assert.Equal(401, refused.StatusCode);
        }
    }
}
