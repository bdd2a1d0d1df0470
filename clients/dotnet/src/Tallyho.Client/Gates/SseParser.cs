using System.Text;

namespace Tallyho.Client.Gates;

/// <summary>One dispatched server-sent event.</summary>
internal sealed record SseMessage(string Event, string Data, string? Id);

/// <summary>The text/event-stream line format (fields, comments, blank-line dispatch), one line at a time.</summary>
internal sealed class SseParser
{
    private readonly StringBuilder _data = new();
    private string? _event;
    private string? _id;
    private bool _hasData;

    /// <summary>The event a blank line completes, else null.</summary>
    public SseMessage? Feed(string line)
    {
        if (line.Length == 0)
        {
            if (!_hasData && _event is null)
            {
                _id = null;
                return null;
            }

            var message = new SseMessage(_event ?? "message", _data.ToString(), _id);
            _data.Clear();
            _event = null;
            _id = null;
            _hasData = false;
            return message;
        }

        if (line[0] == ':')
        {
            return null;
        }

        var colon = line.IndexOf(':');
        var field = colon < 0 ? line : line.Substring(0, colon);
        var value = colon < 0 ? string.Empty : line.Substring(colon + 1);
        if (value.Length > 0 && value[0] == ' ')
        {
            value = value.Substring(1);
        }

        switch (field)
        {
            case "event":
                _event = value;
                break;
            case "data":
                if (_hasData)
                {
                    _data.Append('\n');
                }

                _data.Append(value);
                _hasData = true;
                break;
            case "id":
                _id = value;
                break;
        }

        return null;
    }
}
