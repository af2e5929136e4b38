// Package resp is Redis's wire: the codec for RESP2 and RESP3. Reader
// parses requests (multibulk and inline, split as sdssplitargs splits
// them, internal/argsplit) with every limit checked on the header that
// declares a size; Writer encodes replies, in the protocol the connection
// chose (or a script asked for), with redcon's allocation-free encoders.
// ParseInt and ParseDigits hand the command families Redis's integers
// (internal/redisnum) beside the wire.
//
// Of this module it imports only those leaf packages, and knows nothing of
// connections, commands or the keyspace: the server package serves
// connections with it.
package resp
