package readthrough

import (
	"strings"

	"github.com/stampedeless/stampedeless/commands"
)

// logLoaderChange logs a LOADER.REGISTER or UNREGISTER that changed the
// loaders, with who made it. The URL's password, if any, is masked; header
// values are never logged.
func (f *family) logLoaderChange(c *commands.Ctx, msg, prefix, rawURL string) {
	attrs := []any{"prefix", prefix}
	if rawURL != "" {
		attrs = append(attrs, "url", redactURL(rawURL))
	}
	user, addr := c.Client.Who()
	f.opts.Logger.Info(msg, append(attrs, "user", user, "client", addr)...)
}

// redactURL masks the password of a URL's user information, as
// url.URL.Redacted does, but leaves the rest as written: a loader's URL
// has {key}, which Redacted would escape.
func redactURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return raw
	}
	name, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return raw
	}
	return scheme + "://" + name + ":xxxxx" + rest[at:]
}
