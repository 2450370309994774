//go:build !race

package cache

const poisonFreed = false
