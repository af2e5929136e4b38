// Package resp is Redis's wire: the codec for RESP2 and RESP3 and the
// syntax Redis reads on it. Reader parses requests (multibulk and inline)
// with every limit checked on the header that declares a size; Writer
// encodes replies, in the protocol the connection chose, with redcon's
// allocation-free encoders; ParseInt and SplitArgs are Redis's string2ll
// and sdssplitargs, which the rest of the module reads Redis's integers
// and quoted words with.
//
// It imports nothing of this module, and knows nothing of connections,
// commands or the keyspace: the server package serves connections with it.
package resp
