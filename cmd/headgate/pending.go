package main

import (
	"context"
	"fmt"
	"io"
)

func cmdServe(ctx context.Context, args []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "headgate serve: not available in this build yet")
	return exitUsage
}

func cmdSitemap(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "headgate sitemap: not available in this build yet")
	return exitUsage
}

func cmdAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "headgate audit: not available in this build yet")
	return exitUsage
}
