// Package aside is cache-aside done by the client, as most applications do
// it: GET the key; on a miss call the origin and SET the value. Nothing
// stops every client that misses at once from calling the origin, which is
// the stampede bench/stampede measures and scripts/demo.sh shows.
package aside

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
)

// Origin fetches values from an HTTP origin: GET Base/key, wanting 200.
type Origin struct {
	Base string
	HTTP *http.Client
}

// NewOrigin returns an Origin whose client keeps a connection per client
// open, so that clients clients calling at once do not queue for
// connections (http.Transport keeps 2 per host by default).
func NewOrigin(base string, clients int) Origin {
	return Origin{Base: base, HTTP: &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        clients + 10,
			MaxIdleConnsPerHost: clients + 10,
			IdleConnTimeout:     30 * time.Second,
		},
	}}
}

// Close drops the client's idle connections.
func (o Origin) Close() { o.HTTP.CloseIdleConnections() }

// Fetch calls the origin for key and returns the body of its 200 answer.
func (o Origin) Fetch(ctx context.Context, key string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.Base+"/"+key, nil)
	if err != nil {
		return "", err
	}
	resp, err := o.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("origin: %s", resp.Status)
	}
	return string(body), nil
}

// Read is one cache-aside read of key: GET; on a miss, Fetch and SET with
// ttl. It reports whether the read missed, and so called the origin.
func Read(ctx context.Context, rdb *redis.Client, o Origin, key string, ttl time.Duration) (missed bool, err error) {
	return ReadWith(ctx, rdb, o.Fetch, key, ttl)
}

// ReadWith is Read with the value made by fetch: an origin of another kind,
// such as a computation in the client.
func ReadWith(ctx context.Context, rdb *redis.Client, fetch func(ctx context.Context, key string) (string, error),
	key string, ttl time.Duration) (missed bool, err error) {
	_, err = rdb.Get(ctx, key).Result()
	if !errors.Is(err, redis.Nil) {
		return false, err
	}
	v, err := fetch(ctx, key)
	if err != nil {
		return true, err
	}
	return true, rdb.Set(ctx, key, v, ttl).Err()
}
