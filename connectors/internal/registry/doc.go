// Package registry registers a connector in both of the engine's
// registries at once: its capabilities in catalog's and its factories in
// exec's. It also remembers the factories, because exec keeps its lookup
// unexported and the connector tests build sources and sinks by name.
package registry
