export type PageLanguage = 'ts' | 'csharp';

export interface PagePrograms {
  readonly quickStart: string;
  readonly rest: string;
}

/** The `##` and `###` headings of a page, in order. */
export function headings(markdown: string): string[];
/** The first block of `language` after the heading. */
export function blockAfter(markdown: string, heading: string, language: PageLanguage): string;
/** The page's programs: its quick start, and the blocks after it as a second one. */
export function pagePrograms(markdown: string, language: PageLanguage): PagePrograms;
export function readPage(repoRoot: string, page: string): string;
