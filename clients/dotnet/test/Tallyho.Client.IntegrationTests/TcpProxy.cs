using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Tallyho.Client.IntegrationTests;

/// <summary>A loopback TCP proxy that can cut every open connection, as a flaky network or a restarted proxy would.</summary>
public sealed class TcpProxy : IDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly Uri _upstream;
    private readonly List<Connection> _connections = new();
    private readonly CancellationTokenSource _stop = new();

    public TcpProxy(Uri upstream)
    {
        _upstream = upstream;
        _listener.Start();
        _ = AcceptLoopAsync();
    }

    public Uri Address => new($"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}");

    /// <summary>How many open connections have carried text containing <paramref name="marker"/> downstream.</summary>
    public int ConnectionsThatSaw(string marker)
    {
        lock (_connections)
        {
            return _connections.Count(c => { lock (c.Downstream) { return c.Downstream.ToString().Contains(marker, StringComparison.Ordinal); } });
        }
    }

    /// <summary>Closes every connection open now, both ways.</summary>
    public int CutAll()
    {
        lock (_connections)
        {
            foreach (var connection in _connections)
            {
                connection.Client.Close();
                connection.Server.Close();
            }

            var cut = _connections.Count;
            _connections.Clear();
            return cut;
        }
    }

    public void Dispose()
    {
        _stop.Cancel();
        _listener.Stop();
        CutAll();
        _stop.Dispose();
    }

    private async Task AcceptLoopAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            TcpClient client;
            try
            {
                client = await _listener.AcceptTcpClientAsync(_stop.Token);
            }
            catch (Exception ex) when (ex is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                return;
            }

            var server = new TcpClient();
            await server.ConnectAsync(_upstream.Host, _upstream.Port);
            var connection = new Connection(client, server);
            lock (_connections)
            {
                _connections.Add(connection);
            }

            _ = PumpAsync(client, server, null);
            _ = PumpAsync(server, client, connection.Downstream);
        }
    }

    private static async Task PumpAsync(TcpClient from, TcpClient to, StringBuilder? record)
    {
        var buffer = new byte[8192];
        try
        {
            var source = from.GetStream();
            var sink = to.GetStream();
            int read;
            while ((read = await source.ReadAsync(buffer)) > 0)
            {
                if (record is not null)
                {
                    lock (record)
                    {
                        record.Append(Encoding.UTF8.GetString(buffer, 0, read));
                    }
                }

                await sink.WriteAsync(buffer.AsMemory(0, read));
            }
        }
        catch (Exception ex) when (ex is IOException or ObjectDisposedException or SocketException or InvalidOperationException)
        {
            // Cut.
        }
        finally
        {
            from.Close();
            to.Close();
        }
    }

    private sealed record Connection(TcpClient Client, TcpClient Server)
    {
        public StringBuilder Downstream { get; } = new();
    }
}
