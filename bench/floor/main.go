// Command floor is the benchmark's second reference: the least a Go server
// can do to answer redis-benchmark's GET and SET, storing into one map under
// a read-write lock, in one of two network designs:
//
//   - goroutines (the default): the way a Go network server usually is
//     written, and the way stampedeless is: a goroutine per connection on
//     Go's network poller, bufio on both sides, a flush when the input is
//     drained;
//   - epoll (Linux only): one thread running an event loop over
//     non-blocking sockets, as redis-server does.
//
// It is not a cache and not a product: no expiry, no memory bound, no
// backpressure, no error handling beyond closing the connection.
// bench/compare runs both beside redis-server and stampedeless, so a report
// can tell what Go's runtime and network model cost on the machine from
// what stampedeless's own work does.
//
//	go run ./bench/floor -addr 127.0.0.1:6399 [-loop epoll]
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"os"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6399", "address to listen on")
	loop := flag.String("loop", "goroutines", "network design: goroutines or epoll")
	flag.Parse()
	s := &store{m: map[string][]byte{}}
	var err error
	switch *loop {
	case "goroutines":
		err = serveGoroutines(*addr, s)
	case "epoll":
		err = serveEpoll(*addr, s)
	default:
		err = fmt.Errorf("-loop %q: want goroutines or epoll", *loop)
	}
	if err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

// serveGoroutines accepts connections and serves each on its own goroutine.
func serveGoroutines(addr string, s *store) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		go s.serve(conn)
	}
}
